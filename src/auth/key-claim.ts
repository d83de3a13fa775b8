// What services and routes may know of a claim: its type, to pass it on (see key-guard.ts).
export { KeyClaim } from "./key-guard.ts";
