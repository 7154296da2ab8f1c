// Run after each test file's own hooks (vitest runs afterAll hooks in reverse order of registration).
import { afterAll } from "vitest";
import { closeTestStore } from "./file-store.ts";

afterAll(closeTestStore);
