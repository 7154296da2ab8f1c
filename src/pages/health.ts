/**
 * `/health`, a free route of the secondary site (the primary's is `/api/health`): handed to the
 * dispatcher, which answers it only on the site whose route table lists it.
 */
export { ALL } from "./api/[...path].ts";
