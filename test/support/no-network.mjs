/**
 * Preloaded with `node --import` into the lint tools the tests run: every outgoing socket
 * connection is refused and named on stderr ("no-network: refused …"), so a tool that tries
 * to fetch, phone home or check for updates fails its test instead of reaching the network.
 */
import net from "node:net";

net.Socket.prototype.connect = function refuseConnect(...args) {
  // net.connect passes its normalised arguments as one array: [options, callback].
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = typeof first === "object" && first !== null ? first : { port: first, host: args[1] };
  const target = options.path ?? `${options.host ?? "localhost"}:${options.port}`;
  process.stderr.write(`no-network: refused a connection to ${target}\n`);
  process.nextTick(() => this.destroy(new Error(`no-network: refused a connection to ${target}`)));
  return this;
};
