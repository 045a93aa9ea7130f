import { LATIN_LANGUAGES, type LatinDetector } from '../domain/text-search.js';

let loading: Promise<LatinDetector> | null = null;

/**
 * The offline Latin-script detector (eld's smallest n-gram table, ~1 MB, loaded on first use
 * and only by namespaces in `auto`). Restricted to languages PostgreSQL can stem, so an
 * English sentence is never answered as, say, Slovak; an unreliable guess answers null.
 */
export function loadLatinDetector(): Promise<LatinDetector> {
  loading ??= import('eld/extrasmall').then(({ eld }) => {
    const detector = eld.newInstance();
    detector.setLanguageSubset([...LATIN_LANGUAGES]);
    return (text: string) => {
      const result = detector.detect(text);
      return result.language !== '' && result.isReliable() ? result.language : null;
    };
  });
  return loading;
}
