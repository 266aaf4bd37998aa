import type { TxtfsClient } from "../client/api.ts";
import type { Logger } from "../lib/logger.ts";
import type { Clock } from "./clock.ts";

/** How a mount is made: what `txtfs mount` passes the vfs. */
export interface VfsOptions {
  client: TxtfsClient;
  cacheDir: string;
  cacheSize: number;
  readOnly?: boolean;
  uid: number;
  gid: number;
  logger: Logger;
  /** Long-poll wait of the change follower, seconds. */
  pollWait?: number;
  /**
   * Write-behind (the default): a save returns once it is in the on-disk journal, which delivers
   * saves to the service in order in the background; fsync waits for delivery. Off, every save
   * waits for the service (the journal then only holds saves made while it is unreachable).
   */
  writeBehind?: boolean;
  /** This mount's registered device (its availability states are recorded there). */
  deviceId?: string;
  /** More folder names whose content stays local (see localDirs.ts). */
  localDirs?: string[];
  /** More exclude patterns (`--exclude`, checked by the CLI): see local/excludes.ts. */
  excludes?: string[];
  /** Where the mount is: absolute symlink targets into `.txtfs/` (ln -s "$PWD/note.md") are found by it. */
  mountpoint?: string;
  /** List `.txtfs/` in the root folder (it is always reachable by its path). */
  showControlDir?: boolean;
  /** The wall clock (clock.ts; default: the machine's). The simulation skews one per device. */
  clock?: Clock;
}
