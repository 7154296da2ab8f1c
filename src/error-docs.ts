/**
 * The one table of error codes: each code's HTTP status, its entry on the free `/errors` page
 * (src/pages/errors.astro, which every error body links to through `error.docs`) and, through
 * `ErrorBody` below and `errorResponses` in src/discovery/openapi.ts, its OpenAPI description.
 * `ErrorCode` is this table's keys and `ServiceError` (src/errors.ts) takes its status from it,
 * so a code is declared here and nowhere else.
 */
import { type Static, Type } from "@sinclair/typebox";
import { DEFAULT_NETWORK } from "./networks/index.ts";
import { solana } from "./networks/solana.ts";

/** One error code's entry. No error is ever charged, hence `charged: false`. */
export interface ErrorDoc {
  /** The HTTP status the code is always sent with. */
  status: number;
  /** A short name for the code. */
  title: string;
  /** When the service sends it. */
  when: string;
  /** What the caller should do next. */
  fix: string;
  /** Whether the caller paid for the call: never. */
  charged: false;
}

/** Every error code the service sends, in order of status. */
export const ERROR_DOCS = {
  invalid_request: {
    status: 400,
    title: "Invalid request",
    when: "A query or body field is missing, of the wrong type or out of range; the body is not valid JSON, not a JSON object, or nested deeper than 64 levels; or the payment headers disagree (X-Payment and PAYMENT-SIGNATURE carrying different payments, or one sent twice). details.fields lists each bad field with what was expected there, and what was received when it is short.",
    fix: "Correct every field named in details.fields (each route's request schema is in /openapi.json) and send the request again. The payment sent with the refused request was not settled.",
    charged: false,
  },
  non_canonical_path: {
    status: 400,
    title: "Non-canonical path",
    when: "The path is not in its one canonical form: dot segments (. or ..), encoded dots, slashes, backslashes or NULs, plain backslashes, empty segments (//), or any percent-encoding in an /api/ path. It is refused before any route or payment check runs; details.path echoes what was received.",
    fix: "Send the path exactly as /openapi.json lists it, e.g. /api/payment-verify: no dot segments, no double slashes, no percent-encoding.",
    charged: false,
  },
  target_not_allowed: {
    status: 400,
    title: "Target URL not allowed",
    when: "A URL you asked the service to fetch (e.g. the url of POST /api/x402-check) is not http or https, or its host resolves, directly or through a redirect, to a loopback, private, link-local, CGNAT, multicast, unspecified or cloud-metadata address. details.reason says which rule refused it.",
    fix: "Give a public http(s) URL whose host resolves only to public addresses. The service never reaches private networks, so sending the same URL again will not help.",
    charged: false,
  },
  payment_required: {
    status: 402,
    title: "Payment required (the x402 challenge)",
    when: `You called a paid route without a payment. This 402 is the x402 v2 challenge: the PAYMENT-REQUIRED response header holds it as base64 JSON, and the response body is the same challenge as JSON (x402Version, and in accepts the price in atomic USDC, payTo, asset, network (${DEFAULT_NETWORK.id} on the Base sites, ${solana.id} on the Solana site, whose challenges also name extra.feePayer) and maxTimeoutSeconds). Nothing ran.`,
    fix: "Pay what the challenge asks (any x402 v2 client does this from it): on Base, sign an EIP-3009 transferWithAuthorization of the quoted amount to payTo; on Solana, sign a USDC TransferChecked of the quoted amount to payTo's token account, which the fee payer named in extra.feePayer co-signs and pays the fee of. Then send the same request again with the payment in the X-Payment or PAYMENT-SIGNATURE header.",
    charged: false,
  },
  invalid_payload: {
    status: 402,
    title: "Invalid payment payload",
    when: "The payment header (X-Payment or PAYMENT-SIGNATURE) could not be read: not base64, not JSON, or a required field missing or malformed; details.field names the field. This is decided before any facilitator call, so nothing was verified or transferred.",
    fix: "Rebuild the header with an x402 v2 client: the base64 of the JSON payment payload, with the signed authorisation for one entry of the challenge's accepts. Then send the request again.",
    charged: false,
  },
  payment_already_used: {
    status: 402,
    title: "Payment already used",
    when: "The payment in the header (an EIP-3009 authorisation on Base, a signed transaction on Solana) was already settled, for a different request, or for this one but from another client address than the one that paid, or after its retry window, and no proof of being the payer came with it. A used payment never buys a fresh answer.",
    fix: "For a new call, sign a fresh payment (on Base a new nonce, on Solana a new transaction). To get back an answer you paid for, send the same request with the same complete payment header from the same client address (on Base within the authorisation's validity window, at most 300 s); from another address or after that, for 24 hours, send it with the payment-identifier id you sent with the payment, or with a Sign-In-With-X header signed by the paying wallet.",
    charged: false,
  },
  settlement_failed: {
    status: 402,
    title: "Settlement failed",
    when: "The payment verified and the call ran, but the transfer was not made at settlement (for instance the authorisation or the transaction's blockhash expired, the balance was spent meanwhile, or the nonce was used elsewhere), so the answer was withheld. details.reason, when present, is a stable reason code; facilitator and RPC error text is never sent.",
    fix: "Sign a fresh payment (enough USDC; on Base a new nonce and a validity window that has not passed, on Solana a new transaction with a recent blockhash) and send the request again.",
    charged: false,
  },
  settlement_unknown: {
    status: 402,
    title: "Settlement outcome unknown",
    when: "The settlement's outcome is not known: the facilitator timed out, failed, or broadcast a transaction it could not confirm, so the transfer may have landed. The answer was withheld; the PAYMENT-RESPONSE header carries errorReason settlement_unknown.",
    fix: "Send the same request (method, path with query, body) with the same payment header again. The service first looks on chain for the transfer: if it landed, that payment gets you the answer without paying again; if not, it is settled then. You are never charged twice.",
    charged: false,
  },
  not_found: {
    status: 404,
    title: "Not found",
    when: "Nothing answers at this path (unknown /api/ paths get this JSON body too), or the slug, topic, asset or protocol named in the request does not exist. details may list the valid values (valid_paths, valid_topics, similar_slugs).",
    fix: "Use a path listed in /openapi.json, or one of the values given in details, and send the request again.",
    charged: false,
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    when: "The path exists but does not answer this HTTP method (e.g. GET on a POST-only route). The Allow response header and details.allow list the methods it answers.",
    fix: "Send the request again with a method from the Allow header; each method's request schema is in /openapi.json.",
    charged: false,
  },
  payment_in_progress: {
    status: 409,
    title: "Payment in progress",
    when: "Another request carrying the same payment is still being handled (verified, run or settled): one payment serves one request at a time. Sent with Retry-After: 1.",
    fix: "Wait for the first request's answer rather than sending the payment again. If that answer was lost, wait the Retry-After seconds and send the same request with the same payment header: once the first request is done, you get its kept answer.",
    charged: false,
  },
  insufficient_balance: {
    status: 402,
    title: "Balance too low",
    when: "A call paid from a prepaid balance (signed in, or naming user_id) finds it holding less than the route's price. Nothing was debited. The body is the ordinary per-call challenge plus the balance.",
    fix: "Top the balance up with POST /api/balance/topup?amount=<USD> (paid with x402 by the same wallet), or pay this call per call by answering the challenge in the body.",
    charged: false,
  },
  signin_required: {
    status: 402,
    title: "Sign-in required",
    when: "The request spends or reads a prepaid balance but carries no SIGN-IN-WITH-X header. Only the balance's own wallet may use it. The answer is a 402 whose PAYMENT-REQUIRED declares sign-in-with-x.",
    fix: "Sign the challenge's sign-in-with-x declaration (CAIP-122) with the wallet named by user_id and send it base64-encoded in SIGN-IN-WITH-X; wrapFetchWithSIWx from @x402/extensions/sign-in-with-x does this.",
    charged: false,
  },
  signin_invalid: {
    status: 402,
    title: "Sign-in refused",
    when: "The SIGN-IN-WITH-X header is malformed, expired (older than 5 minutes), for another origin, on a chain the challenge does not declare, for another route, already used, or signed by a wallet other than the one named by user_id. details.reason says which. The answer is a 402 with the challenge.",
    fix: "Sign a fresh message (new nonce, issued now) from the challenge's sign-in-with-x declaration, with the wallet that owns the balance, and send it once.",
    charged: false,
  },
  payment_id_conflict: {
    status: 409,
    title: "Payment identifier conflict",
    when: "The payment-identifier id sent with the payment was already used with a different request or by a different payer. An id names one paid request of one wallet.",
    fix: "Send a fresh payment-identifier id with each new paid request. To fetch an earlier answer by its id, send exactly the request it was first used with, paid by the same wallet.",
    charged: false,
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    when: "The request body is over 64 KiB (65,536 bytes), whatever the method. It is refused before the payment is looked at; details.max_bytes gives the limit.",
    fix: "Send a body of at most 64 KiB.",
    charged: false,
  },
  rate_limited: {
    status: 429,
    title: "Rate limited",
    when: "Your address sent more free requests than its budget allows (RATE_LIMIT_PER_MINUTE a minute, 120 unless the operator changed it; details.budget is free), asked for far more unpaid 402 challenges than any paying client needs (details.budget is challenge; past as many payment headers, one not signed by the payer it names counts as unpaid), or one payer already has 8 paid calls in flight from your address (details.budget is paid_in_flight). Sent with Retry-After. A refused paid call was refused before its payment was verified, so nothing was charged.",
    fix: "Wait the Retry-After seconds and send the request again, and pace free requests below the budget given in details.per_minute. For paid_in_flight, wait for one of your calls in flight to answer first. Paid calls themselves are not rate limited.",
    charged: false,
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    when: "The service failed while answering: a fault on our side. The cause is logged, never sent.",
    fix: "Try again later; if the same request keeps failing, it will until the fault is fixed. Nothing was settled.",
    charged: false,
  },
  upstream_error: {
    status: 502,
    title: "Upstream error",
    when: "A chain node, a market-data API or the payment facilitator failed or answered something unreadable (malformed JSON, an unexpected shape). details.upstream names the source when it is a data source (e.g. rpc, dexscreener, defillama, hyperliquid).",
    fix: "Try again shortly. Nothing was settled.",
    charged: false,
  },
  unavailable: {
    status: 503,
    title: "Unavailable",
    when: "A dependency this call needs is down: the chain node is unreachable, the database (e.g. the payment ledger) is unavailable, a needed service such as a directory is not answering, or the data the route serves does not exist yet (the trust leaderboard before its first crawl). details.upstream names the source when known.",
    fix: "Try again after the Retry-After seconds when the header is given, otherwise in a minute or so. Nothing was settled.",
    charged: false,
  },
  payment_unavailable: {
    status: 503,
    title: "Payment check unavailable",
    when: "The payment could not be checked in time: the facilitator or the chain RPC did not answer within the time budget. The call was not run and nothing was settled. Sent with Retry-After.",
    fix: "Wait the Retry-After seconds, then send the same request with the same payment header (or a fresh authorisation if its validity window has passed).",
    charged: false,
  },
  upstream_timeout: {
    status: 504,
    title: "Upstream timeout",
    when: "A chain node or a third-party API did not answer within the call's time limit. details.upstream names it.",
    fix: "Try again shortly. Nothing was settled.",
    charged: false,
  },
} as const satisfies Record<string, ErrorDoc>;

/** Stable error codes; callers match on these, never on message text. */
export type ErrorCode = keyof typeof ERROR_DOCS;

/** Every code, in the table's order. */
export const ERROR_CODES = Object.keys(ERROR_DOCS) as ErrorCode[];

/** The HTTP status `code` is always sent with. */
export function statusOf(code: ErrorCode): number {
  return ERROR_DOCS[code].status;
}

/** The JSON body of every error response, as TypeBox (for `/openapi.json`) and as a type. */
export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.Union(
      ERROR_CODES.map((c) => Type.Literal(c)),
      { description: "stable snake_case code; its status and meaning are on /errors" },
    ),
    message: Type.String({ description: "what is wrong and how to fix it" }),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    docs: Type.String({ description: "the code's entry on the free /errors page", examples: ["/errors#invalid_request"] }),
  }),
});
export type ErrorBody = Static<typeof ErrorBody>;
