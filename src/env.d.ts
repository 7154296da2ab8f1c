/// <reference types="astro/client" />

declare namespace App {
  interface Locals extends import("./context.ts").ApiLocals {}
}
