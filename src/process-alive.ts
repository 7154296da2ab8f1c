/**
 * Whether process `pid` is running. Signal 0 sends nothing, only checks: it fails with ESRCH when
 * no such process exists, and with EPERM when one exists that this user may not signal (another
 * user's), which is alive all the same.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
