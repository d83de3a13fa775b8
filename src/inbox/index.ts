// What the features above the inbox use of its HTTP side: the session check their routes share
// (the widget's routes take the same sessions as the inbox's).
export { changeOf, sessionCheck } from "./session-check.ts";
