/**
 * Whether process `pid` is running. Signal 0 sends nothing, only checks: it fails with ESRCH when
 * no such process exists, and with EPERM when one exists that this user may not signal (another
 * user's), which is alive all the same. A pid of 0 or below names a process group, not a process
 * (signal 0 to it succeeds for our own group), so it is never taken for one.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
