/**
 * `POST /api/x402-check`: call an endpoint once without payment and report whether a standard
 * client can pay it, whether its challenge conforms, whether it is discoverable, its price and
 * payTo. Refused targets throw 400 `target_not_allowed` (not charged).
 */
import { x402Check } from "../spec/routes/intel.ts";
import { defineFunction } from "../src/context.ts";
import { InvalidRequestError } from "../src/errors.ts";
import { checkConformance } from "../src/intel/conformance.ts";
import { eip3009Probe } from "../src/intel/eip3009-probe.ts";
import { intelOf } from "../src/intel/intel-services.ts";

export default defineFunction(x402Check, async (input, ctx) => {
  const method = input.method ?? "POST";
  if (input.body !== undefined && method === "GET") {
    throw new InvalidRequestError("A GET call carries no body; drop body or use another method.", [
      { field: "body.body", expected: "absent when method is GET" },
    ]);
  }
  const report = await checkConformance(intelOf(ctx).fetcher, {
    url: input.url,
    method,
    ...(input.body !== undefined ? { body: input.body } : {}),
    eip3009Probe: eip3009Probe(ctx.chain, ctx.config.network),
  });
  ctx.log.info("x402 check", {
    url: report.url,
    status: report.status,
    payable: report.payable,
    conformant: report.conformant,
    discoverable: report.discoverable,
    discovery: report.discovery,
    ms: report.elapsed_ms,
  });
  return report;
});
