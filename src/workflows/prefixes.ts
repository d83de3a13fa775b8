/** Every workflow route is also served under Novu's older name, which @novu/node calls. */
export const WORKFLOW_PREFIXES = [
  { prefix: "/workflows", legacy: false },
  { prefix: "/notification-templates", legacy: true },
] as const;
