/** `GET /api/howto/vps-gdrive-connect`: the paid SOP record (the optional `sop` must name this SOP; the route's schema enforces it). */
import { howtoRoutes } from "../spec/routes/content.ts";
import { sopRecordFunction } from "../src/content/sop-function.ts";

export default sopRecordFunction(howtoRoutes["vps-gdrive-connect"].get, "vps-gdrive-connect");
