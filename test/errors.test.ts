/** Service errors are recognised across the two copies of src/errors.ts (the Astro bundle's and the server's). */
import { expect, it } from "vitest";
import { InvalidRequestError, NotFoundError, ServiceError, toErrorResponse, UpstreamError } from "../src/errors.ts";

it("recognises an error from another copy of the module by its brand", async () => {
  // A query makes Vite load a second, separate instance of the module, as the Astro bundle has.
  const copy = "../src/errors.ts?copy";
  const other = (await import(/* @vite-ignore */ copy)) as typeof import("../src/errors.ts");
  expect(other.ServiceError).not.toBe(ServiceError);
  const foreign = new other.UpstreamError("unavailable", "rpc", "down");
  expect(foreign instanceof ServiceError).toBe(true);
  expect(foreign instanceof UpstreamError).toBe(true);
  expect(foreign instanceof NotFoundError).toBe(false);
  expect(new other.NotFoundError("gone") instanceof InvalidRequestError).toBe(false);
  expect(toErrorResponse(foreign)).toEqual({
    status: 503,
    headers: {},
    body: { error: { code: "unavailable", message: "down", details: { upstream: "rpc" } } },
  });
  expect(new Error("x") instanceof ServiceError).toBe(false);
  expect(toErrorResponse(new Error("secret detail")).body.error.message).not.toContain("secret");
});
