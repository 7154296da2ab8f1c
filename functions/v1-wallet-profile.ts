/** `POST /v1/wallet-profile`: the secondary site's entry of the wallet profile, answered by the primary's function. */
import { walletProfileV1 } from "../spec/routes/base-tools.ts";
import { defineFunction } from "../src/context.ts";
import walletProfile from "./wallet-profile.ts";

export default defineFunction(walletProfileV1, (input, ctx) => walletProfile.run(input, ctx));
