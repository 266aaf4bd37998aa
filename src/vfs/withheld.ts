// The ids of notes and folders the listing and the change feed must not show, though the service
// still sends records of them: a note a local file stands for (a ghost: renamed to a non-note name,
// kept local as bytes), an item deleted here whose delete is on its way, and a note whose delete
// from here was delivered, until the feed brings that delete. One owner, so every reason an id is
// hidden, and every event that shows it again, is read here; the tree asks `hides`.
import { BoundedMap } from "./boundedMap.ts";

export class Withheld {
  /** Notes a local file stands for, by id. */
  private readonly ghosts = new Set<string>();
  /** Notes and folders deleted here whose delete is still on its way. */
  private readonly deletesOnTheirWay = new Set<string>();
  /**
   * Notes whose delete from here was delivered: the feed's records of their earlier versions (the
   * echo of our own last save) still come, and must not bring them back under the name a new note
   * has taken since (the service never undeletes). Bounded: the feed brings the delete soon.
   */
  private readonly deletedHere = new BoundedMap<string, true>(10_000);

  /** Whether the feed's or the listing's record of `id` is kept out of the tree. */
  hides(id: string): boolean {
    return this.ghosts.has(id) || this.deletesOnTheirWay.has(id) || this.deletedHere.has(id);
  }

  /** Whether a local file stands for the note `id`. */
  isGhost(id: string): boolean {
    return this.ghosts.has(id);
  }

  /** Whether any local file stands for a note (else no walk of the local files finds one). */
  get anyGhost(): boolean {
    return this.ghosts.size > 0;
  }

  /** Whether `id` was deleted here and its delete is not delivered yet. */
  isDeleting(id: string): boolean {
    return this.deletesOnTheirWay.has(id);
  }

  /** A local file stands for the note `id` now (a rename aside, bytes kept local, the manifest at start). */
  ghostMade(id: string): void {
    this.ghosts.add(id);
  }

  /** No local file stands for `id` any more (the note goes on under a note name, or it was deleted). */
  ghostGone(id: string): void {
    this.ghosts.delete(id);
  }

  /** Deleted here: its delete is on its way (journalled, found in the journal at start, or sent now). */
  deleteStarted(id: string): void {
    this.deletesOnTheirWay.add(id);
  }

  /**
   * Its delete is no longer on its way: `delivered` (a note's: its earlier records stay hidden
   * until the feed brings the delete), refused or dropped (it shows again).
   */
  deleteEnded(id: string, delivered: "note" | "folder" | false): void {
    this.deletesOnTheirWay.delete(id);
    if (delivered === "note") this.deletedHere.set(id, true);
  }

  /** The feed brought the delete of `id`: no earlier record of it comes after it. */
  deleteSeen(id: string): void {
    this.deletedHere.delete(id);
  }
}
