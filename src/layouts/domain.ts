/** One of a layout's variables: what its content reads besides `{{{body}}}`, with a default. */
export interface LayoutVariable {
  name: string;
  type: string;
  defaultValue?: unknown;
  required: boolean;
}

/**
 * An email layout (Novu's): an environment's HTML frame around email steps' content, which it
 * places where it says `{{{body}}}`. An email step names its layout (`_layoutId`) or gets the
 * environment's default, of which there is at most one. A copy promoted from another environment
 * names its source in `parentId`, and answers for it (steps keep naming the source's id).
 */
export interface Layout {
  id: string;
  organizationId: string;
  environmentId: string;
  parentId: string;
  creatorId: string;
  identifier: string;
  name: string;
  description: string;
  content: string;
  variables: LayoutVariable[];
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
}

/** What the engine needs of a layout to wrap an email: its content and its variables' defaults. */
export interface LayoutFrame {
  content: string;
  defaults: Record<string, unknown>;
}

export function frameOf(layout: Layout): LayoutFrame {
  const defaults: Record<string, unknown> = {};
  for (const variable of layout.variables)
    if (variable.defaultValue !== undefined && variable.defaultValue !== null)
      defaults[variable.name] = variable.defaultValue;
  return { content: layout.content, defaults };
}
