/** `GET /api/howto/youtube-auto-ai`: the paid SOP record (the optional `sop` must name this SOP; the route's schema enforces it). */
import { howtoRoutes } from "../spec/routes/content.ts";
import { sopRecordFunction } from "../src/content/sop-function.ts";

export default sopRecordFunction(howtoRoutes["youtube-auto-ai"].get, "youtube-auto-ai");
