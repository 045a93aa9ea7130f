/** How one view opens another: an entity in the entity view, a chain in the provenance view. */
export interface Navigator {
  openEntity(key: string): void;
  openProvenance(id: string, label: string): void;
}
