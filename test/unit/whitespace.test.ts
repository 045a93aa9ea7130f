import { describe, expect, it } from 'vitest';
import { collapseWhitespace } from '../../src/domain/whitespace.js';

describe('collapseWhitespace', () => {
  it('turns every run of whitespace into one space, as a replace of \\s+ does', () => {
    const samples = [
      'plain words with single spaces',
      '  leading and trailing  ',
      'tab\tand\nnewline\r\nand\u00a0nbsp',
      'ideographic\u3000space, line\u2028separator, bom\ufeff, em\u2003space',
      ' \t \n ',
      ' ',
      '',
      'no-space-at-all',
    ];
    for (const s of samples) expect(collapseWhitespace(s)).toBe(s.replace(/\s+/g, ' '));
  });

  it('returns prose with single spaces unchanged', () => {
    const prose = 'Deploy failed on step 3; rollback took 4 minutes.';
    expect(collapseWhitespace(prose)).toBe(prose);
  });
});
