/**
 * Where the deep pages of a table list start: the name at every `BOOKMARK_STRIDE`-th position of a
 * list (all tables, or those of one onboarding status, by name), remembered per generation.
 *
 * SQLite reaches an offset only by stepping over every index entry before it, so without these a
 * page 50,000 rows deep costs a walk of 50,000 entries (about 2.5 ms) on every request. With a
 * bookmark at or before the offset, the page is read from there (`name >= bookmark`), stepping
 * over fewer than `BOOKMARK_STRIDE` entries.
 *
 * A list's positions move only when a table joins or leaves it or is renamed, and each of those
 * bumps the list's generation (`table_status_counts.generation`, kept by triggers). So a bookmark
 * holds while the generation it was found in is current: the statement that reads a page from a
 * bookmark also reads the generation, in the same snapshot, and a page cut from an outdated
 * bookmark is thrown away (`TableService.page`). A change of generation forgets the list's
 * bookmarks; they are found again, each by one walk, as deep pages are asked for.
 *
 * Memory: at most one name per `BOOKMARK_STRIDE` tables of each list, in the process (or isolate)
 * that serves the list; instances share nothing and need not.
 */

/** Positions between bookmarks: a page read from a bookmark steps over fewer entries than this. */
export const BOOKMARK_STRIDE = 1000;

export interface Bookmark {
  position: number;
  name: string;
}

export class Bookmarks {
  private readonly lists = new Map<string, { generation: number; names: Map<number, string> }>();

  /** The position of the bookmark a page at `offset` starts from; 0 means the list's start. */
  static positionFor(offset: number): number {
    return offset - (offset % BOOKMARK_STRIDE);
  }

  /** The name at `position` of `list`, if it was found in `generation`. */
  get(list: string, generation: number, position: number): Bookmark | undefined {
    const known = this.lists.get(list);
    const name = known?.generation === generation ? known.names.get(position) : undefined;
    return name === undefined ? undefined : { position, name };
  }

  /** Remembers a name found in `generation`; the list's bookmarks of any other generation go. */
  set(list: string, generation: number, bookmark: Bookmark): void {
    let known = this.lists.get(list);
    if (known?.generation !== generation) {
      known = { generation, names: new Map() };
      this.lists.set(list, known);
    }
    known.names.set(bookmark.position, bookmark.name);
  }

  /** Forgets a list's bookmarks (one turned out to be outdated). */
  forget(list: string): void {
    this.lists.delete(list);
  }
}
