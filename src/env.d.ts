/// <reference types="astro/client" />

type ApiLocalsOfService = import("./context.ts").ApiLocals;

declare namespace App {
  /** What Express hands every request (src/server/app.ts). */
  interface Locals extends ApiLocalsOfService {}
}
