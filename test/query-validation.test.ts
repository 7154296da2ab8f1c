/**
 * Query parameters arrive as text: each is read as the type its field declares only when the
 * text spells that type exactly, so a buyer is never answered (and charged) for a value they
 * did not write; anything else is a 400 naming the field.
 */
import type { TObject } from "@sinclair/typebox";
import { expect, it } from "vitest";
import { balanceTopup } from "../spec/routes/assistant.ts";
import { getTrustLeaderboard } from "../spec/routes/intel.ts";
import type { InvalidRequestError } from "../src/errors.ts";
import { validateQuery } from "../src/validate.ts";

const leaderboard = getTrustLeaderboard.query as NonNullable<typeof getTrustLeaderboard.query>;
const topup = balanceTopup.query as NonNullable<typeof balanceTopup.query>;

function refusal(schema: TObject, query: string): unknown {
  try {
    validateQuery(schema, new URLSearchParams(query));
  } catch (error) {
    return (error as InvalidRequestError).details;
  }
  return "accepted";
}

it("reads a number written in decimal digits, with a fraction or an exponent", () => {
  expect(validateQuery(leaderboard, new URLSearchParams("limit=10&order=worst"))).toEqual({ limit: 10, order: "worst" });
  expect(validateQuery(leaderboard, new URLSearchParams("limit=1e1"))).toEqual({ limit: 10 });
  expect(validateQuery(topup, new URLSearchParams("amount=12.5"))).toEqual({ amount: 12.5 });
  expect(validateQuery(topup, new URLSearchParams("amount=2.5E0"))).toEqual({ amount: 2.5 });
  expect(validateQuery(leaderboard, new URLSearchParams("limit=05"))).toEqual({ limit: 5 });
});

it("refuses, naming the field, text that only a lenient reading turns into a number", () => {
  for (const limit of ["1.5", "true", "%201", "1%20", "0x10", "+5", "1,5", ""]) {
    expect(refusal(leaderboard, `limit=${limit}`), limit).toEqual({ fields: [expect.objectContaining({ field: "query.limit" })] });
  }
  for (const amount of ["true", "%202", "0x2", "Infinity"]) {
    expect(refusal(topup, `amount=${amount}`), amount).toEqual({ fields: [expect.objectContaining({ field: "query.amount" })] });
  }
});
