// The workflows feature's templates, for code that checks or parses them without the workflows'
// service and its database: the engine's render threads load only this.
export { compileCheck, parseTemplate, TEMPLATE_HELPERS, templateVariables } from "./templates.ts";
