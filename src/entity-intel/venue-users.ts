/**
 * The users of a venue from the transfers to and from its addresses: for each address on the
 * other side, its volume by token, its number of transfers and the first and last blocks it was
 * seen in.
 */
import type { Address } from "viem";
import type { TransferLog } from "../chain/log-scanner.ts";

/** What one user did with the venue in the window. */
export interface VenueUser {
  volume: Map<Address, bigint>;
  transfers: number;
  // The first and last blocks, not every block: a busy user can have more transfers than a
  // spread argument list holds (Math.max(...blocks) throws a RangeError past ~120k).
  firstBlock: number;
  lastBlock: number;
}

/** The users of the venue whose addresses are `cluster`; transfers inside the venue are left out. */
export function venueUsersOf(logs: readonly TransferLog[], cluster: ReadonlySet<Address>): Map<Address, VenueUser> {
  const users = new Map<Address, VenueUser>();
  for (const log of logs) {
    if (cluster.has(log.from) && cluster.has(log.to)) continue;
    const user = cluster.has(log.from) ? log.to : log.from;
    let u = users.get(user);
    if (!u) {
      u = { volume: new Map(), transfers: 0, firstBlock: log.blockNumber, lastBlock: log.blockNumber };
      users.set(user, u);
    }
    u.volume.set(log.token, (u.volume.get(log.token) ?? 0n) + log.value);
    u.transfers++;
    if (log.blockNumber < u.firstBlock) u.firstBlock = log.blockNumber;
    if (log.blockNumber > u.lastBlock) u.lastBlock = log.blockNumber;
  }
  return users;
}
