/** Bounding how long the service waits for something it does not control (a facilitator, a chain node). */

/** `promise`, or what `onTimeout` gives (or throws) when `promise` has not settled within `ms`. */
export function withBudget<T>(promise: Promise<T>, ms: number, onTimeout: () => T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => Promise.resolve().then(onTimeout).then(resolve, reject), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
