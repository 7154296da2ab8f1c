/** `POST /api/howto/x402-register`: the paid SOP record (the optional `sop` must name this SOP; the route's schema enforces it). */
import { howtoRoutes } from "../spec/routes/content.ts";
import { sopRecordFunction } from "../src/content/sop-function.ts";

export default sopRecordFunction(howtoRoutes["x402-register"].post, "x402-register");
