import { isDeepStrictEqual } from "node:util";
import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { badRequest, conflict, invalidField, mention, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import { isUniqueViolation } from "../store/store.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { compileCheck, templateVariables } from "../workflows/index.ts";
import { workflowsUsingLayout } from "../workflows/service.ts";
import { DEFAULT_LAYOUT } from "./default-layout.ts";
import { frameOf, type Layout, type LayoutFrame, type LayoutVariable } from "./domain.ts";
import * as layouts from "./repository.ts";

export { frameOf, type Layout, type LayoutFrame, type LayoutVariable } from "./domain.ts";

export interface LayoutInput {
  name: string;
  identifier: string;
  description?: string | undefined;
  content: string;
  variables?: Partial<LayoutVariable>[] | undefined;
  isDefault?: boolean | undefined;
}

/** What the layout's own template fills besides its variables: the email's parts and Novu's system roots. */
const RESERVED = new Set(["body", "preheader", "subject", "blocks", "branding"]);

const missing = (id: string, tenant: Tenant) =>
  notFound(`Layout not found for id ${mention(id, "given")} in the environment ${tenant.environmentId}`);
const taken = (identifier: string, tenant: Tenant) =>
  conflict(
    `Layout with identifier: ${mention(identifier, "given")} already exists under environment ${tenant.environmentId}`,
  );

/** The content must place the email's body (`{{{body}}}`) and compile as a template. */
function requireContent(content: string): void {
  if (!content.includes("{{{body}}}"))
    throw invalidField("content", "must contain {{{body}}}: the place of the email's content");
  const problem = compileCheck(content);
  if (problem) throw invalidField("content", problem);
}

/**
 * The layout's variables: those its content reads (but the email's parts and the engine's roots),
 * each with the type, default and required flag the request gives it, as Novu extracts them.
 */
function variablesOf(content: string, given: Partial<LayoutVariable>[] = []): LayoutVariable[] {
  return templateVariables(content)
    .filter((name) => !RESERVED.has(name.split(".")[0] ?? name))
    .map((name) => {
      const sent = given.find((v) => v.name === name);
      return {
        name,
        type: sent?.type ?? "String",
        ...(sent?.defaultValue !== undefined ? { defaultValue: sent.defaultValue } : {}),
        required: sent?.required ?? false,
      };
    });
}

export async function createLayout(deps: Deps, tenant: Tenant, input: LayoutInput): Promise<Layout> {
  requireContent(input.content);
  return inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    const created = await layouts.insertLayout(d.db, {
      id: newObjectId(d.clock.now()),
      organizationId: tenant.organizationId,
      environmentId: tenant.environmentId,
      parentId: "",
      creatorId: tenant.actorId,
      identifier: input.identifier,
      name: input.name,
      description: input.description ?? "",
      content: input.content,
      variables: variablesOf(input.content, input.variables),
      isDefault: input.isDefault ?? false,
      createdAt: now,
      updatedAt: now,
    });
    if (!created) throw taken(input.identifier, tenant);
    if (created.isDefault) await layouts.clearDefaults(d.db, tenant.environmentId, created.id, now);
    return created;
  });
}

/**
 * The layout a new environment that derives from none starts with, as its default (Novu makes the
 * same one at onboarding): "Default Layout", identifier `novu-default-layout`. An environment that
 * derives from another gets its copy by promotion. Inside the caller's transaction when there is one.
 */
export async function createDefaultLayout(deps: Deps, tenant: Tenant): Promise<Layout> {
  return createLayout(deps, tenant, { ...DEFAULT_LAYOUT, isDefault: true });
}

export async function getLayout(deps: Deps, tenant: Tenant, id: string): Promise<Layout> {
  const found = await layouts.findLayout(deps.db, tenant.environmentId, id);
  if (!found) throw missing(id, tenant);
  return found;
}

export async function listLayouts(
  deps: Deps,
  tenant: Tenant,
  input: { page?: number | undefined; pageSize?: number | undefined; orderBy?: number | undefined },
) {
  const page = input.page ?? 0;
  const pageSize = input.pageSize ?? 10;
  const { totalCount, layouts: data } = await layouts.listLayouts(deps.db, tenant.environmentId, {
    offset: page * pageSize,
    limit: pageSize,
    descending: input.orderBy === -1,
  });
  return { page, pageSize, totalCount, data };
}

export async function updateLayout(
  deps: Deps,
  tenant: Tenant,
  id: string,
  changes: Partial<LayoutInput>,
): Promise<Layout> {
  if (Object.values(changes).every((value) => value === undefined))
    throw badRequest("Payload can not be empty");
  try {
    return await inTransaction(deps, async (d) => {
      const current = await layouts.findLayout(d.db, tenant.environmentId, id);
      if (!current) throw missing(id, tenant);
      if (changes.isDefault === false && current.isDefault) throw conflict("One default layout is required");
      if (changes.identifier !== undefined && changes.identifier !== current.identifier) {
        if (await layouts.findLayoutByIdentifier(d.db, tenant.environmentId, changes.identifier))
          throw taken(changes.identifier, tenant);
      }
      const content = changes.content ?? current.content;
      if (changes.content !== undefined) requireContent(content);
      const now = isoNow(d.clock);
      const updated = await layouts.updateLayout(
        d.db,
        tenant.environmentId,
        id,
        {
          ...(changes.name !== undefined ? { name: changes.name } : {}),
          ...(changes.identifier !== undefined ? { identifier: changes.identifier } : {}),
          ...(changes.description !== undefined ? { description: changes.description } : {}),
          ...(changes.content !== undefined ? { content } : {}),
          ...(changes.content !== undefined || changes.variables !== undefined
            ? { variables: variablesOf(content, changes.variables ?? current.variables) }
            : {}),
          ...(changes.isDefault !== undefined ? { isDefault: changes.isDefault } : {}),
        },
        now,
      );
      if (!updated) throw missing(id, tenant);
      if (updated.isDefault) await layouts.clearDefaults(d.db, tenant.environmentId, updated.id, now);
      return updated;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw taken(changes.identifier ?? "", tenant);
    throw error;
  }
}

/** Makes the layout the environment's default, and the previous default not. */
export async function setDefaultLayout(deps: Deps, tenant: Tenant, id: string): Promise<Layout> {
  return inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    const updated = await layouts.updateLayout(d.db, tenant.environmentId, id, { isDefault: true }, now);
    if (!updated) throw missing(id, tenant);
    await layouts.clearDefaults(d.db, tenant.environmentId, id, now);
    return updated;
  });
}

/** Refused while a live workflow's step uses the layout, or while it is the default. */
export async function deleteLayout(deps: Deps, tenant: Tenant, id: string): Promise<void> {
  await inTransaction(deps, async (d) => {
    const layout = await layouts.findLayout(d.db, tenant.environmentId, id);
    if (!layout) throw missing(id, tenant);
    const names = [layout.id, ...(layout.parentId ? [layout.parentId] : [])];
    if ((await workflowsUsingLayout(d, tenant.environmentId, names)).length > 0)
      throw conflict(`Layout with id ${id} is being used so it can not be deleted`);
    if (layout.isDefault)
      throw conflict(`Layout with id ${id} is being used as your default layout, so it can not be deleted`);
    await layouts.deleteLayout(d.db, tenant.environmentId, id);
  });
}

/** The environment's layouts go with it when it is deleted (once no workflow of it is left to use them). */
export async function deleteEnvironmentLayouts(deps: Deps, environmentId: string): Promise<void> {
  await layouts.deleteEnvironmentLayouts(deps.db, environmentId);
}

/**
 * The frame an email step is sent in: the layout it names (`_layoutId`, or `layoutId` as written;
 * a promoted step names the source environment's layout, whose copy answers), else the
 * environment's default; undefined for none (a named layout that is gone is none).
 */
export async function layoutFrameForStep(
  deps: Deps,
  environmentId: string,
  template: Record<string, unknown>,
): Promise<LayoutFrame | undefined> {
  const named = typeof template._layoutId === "string" ? template._layoutId : template.layoutId;
  const layout =
    typeof named === "string" && named !== ""
      ? await layouts.findLayoutOrCopy(deps.db, environmentId, named)
      : await layouts.findDefaultLayout(deps.db, environmentId);
  return layout ? frameOf(layout) : undefined;
}

// ------------------------------------------------------------------------------------------------
// Promotion (environments/service.ts): a target environment's copies of the source's layouts, each
// naming its source in `parentId`. A layout the target made itself is never touched.

/** What a publish copies of a layout, and so what promotion compares. */
const PROMOTED = ["identifier", "name", "description", "content", "variables", "isDefault"] as const;

/** The environment's layouts, oldest first. */
export function environmentLayouts(deps: Deps, environmentId: string): Promise<Layout[]> {
  return layouts.allLayouts(deps.db, environmentId);
}

/** Which environment each of these layouts is in; ids of none (deleted layouts) are left out. */
export function layoutEnvironments(deps: Deps, ids: readonly string[]): Promise<Map<string, string>> {
  return layouts.findLayoutEnvironments(deps.db, ids);
}

/** The fields a publish copies in which the copy differs from its source. */
export function layoutDifferences(source: Layout, copy: Layout): string[] {
  return PROMOTED.filter((field) => !isDeepStrictEqual(source[field], copy[field]));
}

/** The layouts a workflow's steps name (`_layoutId`, or `layoutId` as written). */
export function layoutsNamedBy(workflow: { steps: { template: Record<string, unknown> }[] }): string[] {
  return workflow.steps.flatMap(({ template }) =>
    [template._layoutId, template.layoutId].filter((id): id is string => typeof id === "string" && id !== ""),
  );
}

const promotedFields = (source: Layout) => ({
  identifier: source.identifier,
  name: source.name,
  description: source.description,
  content: source.content,
  variables: source.variables,
  isDefault: source.isDefault,
});

/**
 * A copy of the source's layout in the target (the default there when it is the default here);
 * undefined when the target has another layout of that identifier.
 */
export async function insertLayoutCopy(
  deps: Deps,
  target: Tenant,
  source: Layout,
): Promise<Layout | undefined> {
  const now = isoNow(deps.clock);
  const copy = await layouts.insertLayout(deps.db, {
    ...promotedFields(source),
    id: newObjectId(deps.clock.now()),
    organizationId: target.organizationId,
    environmentId: target.environmentId,
    parentId: source.id,
    creatorId: target.actorId,
    createdAt: now,
    updatedAt: now,
  });
  if (copy?.isDefault) await layouts.clearDefaults(deps.db, target.environmentId, copy.id, now);
  return copy;
}

/**
 * The copy rewritten as its source is (the default there when it is the default here); undefined
 * when another layout of the target has the source's identifier.
 */
export async function replaceLayoutCopy(
  deps: Deps,
  target: Tenant,
  copyId: string,
  source: Layout,
): Promise<Layout | undefined> {
  const holder = await layouts.findLayoutByIdentifier(deps.db, target.environmentId, source.identifier);
  if (holder && holder.id !== copyId) return undefined;
  const now = isoNow(deps.clock);
  const copy = await layouts.updateLayout(deps.db, target.environmentId, copyId, promotedFields(source), now);
  if (!copy) throw new Error(`no layout ${copyId} in ${target.environmentId}`);
  if (copy.isDefault) await layouts.clearDefaults(deps.db, target.environmentId, copy.id, now);
  return copy;
}

/** Deletes a copy whose source is gone (the caller has made sure nothing uses it). */
export async function deleteLayoutCopy(deps: Deps, environmentId: string, copyId: string): Promise<void> {
  await layouts.deleteLayout(deps.db, environmentId, copyId);
}

// ------------------------------------------------------------------------------------------------
// Novu's /v2 layouts (@novu/api's `layouts.*`): named by their identifier (`layoutId`) or their id;
// the HTML is the control value `email.body`.

/** The HTML of a layout made without one: the email as it is, in a document. */
export const PLAIN_LAYOUT = "<!DOCTYPE html>\n<html>\n<body>\n{{{body}}}\n</body>\n</html>";

/** The layout named by its identifier, or by its id. */
export async function getLayoutByRef(deps: Deps, tenant: Tenant, ref: string): Promise<Layout> {
  const found =
    (await layouts.findLayoutByIdentifier(deps.db, tenant.environmentId, ref)) ??
    (/^[0-9a-f]{24}$/.test(ref) ? await layouts.findLayout(deps.db, tenant.environmentId, ref) : undefined);
  if (!found) throw notFound(`Layout ${mention(ref, "given")} was not found`);
  return found;
}

export async function searchLayouts(
  deps: Deps,
  tenant: Tenant,
  input: {
    limit?: number | undefined;
    offset?: number | undefined;
    orderBy?: "createdAt" | "updatedAt" | "name" | undefined;
    orderDirection?: "ASC" | "DESC" | undefined;
    query?: string | undefined;
  },
) {
  return layouts.searchLayouts(deps.db, tenant.environmentId, {
    limit: input.limit ?? 10,
    offset: input.offset ?? 0,
    orderBy: input.orderBy ?? "createdAt",
    direction: input.orderDirection === "ASC" ? "asc" : "desc",
    query: input.query?.trim() ?? "",
  });
}

export async function createLayoutV2(
  deps: Deps,
  tenant: Tenant,
  input: { layoutId: string; name: string; content?: string | undefined },
): Promise<Layout> {
  return createLayout(deps, tenant, {
    identifier: input.layoutId,
    name: input.name,
    content: input.content ?? PLAIN_LAYOUT,
  });
}

/** PUT: the name, and the HTML when `controlValues` says (null puts the plain layout back). */
export async function updateLayoutV2(
  deps: Deps,
  tenant: Tenant,
  ref: string,
  input: { name: string; content?: string | null | undefined },
): Promise<Layout> {
  const layout = await getLayoutByRef(deps, tenant, ref);
  const content = input.content === null ? PLAIN_LAYOUT : input.content;
  return updateLayout(deps, tenant, layout.id, {
    name: input.name,
    ...(content !== undefined ? { content } : {}),
  });
}

export async function deleteLayoutV2(deps: Deps, tenant: Tenant, ref: string): Promise<void> {
  const layout = await getLayoutByRef(deps, tenant, ref);
  await deleteLayout(deps, tenant, layout.id);
}

/** A copy under a new name (and identifier: the one given, else one made from the name), never the default. */
export async function duplicateLayout(
  deps: Deps,
  tenant: Tenant,
  ref: string,
  input: { name: string; layoutId?: string | undefined },
): Promise<Layout> {
  const source = await getLayoutByRef(deps, tenant, ref);
  const slug =
    input.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 100) || "layout";
  const identifier = input.layoutId ?? `${slug}-${newObjectId(deps.clock.now()).slice(-8)}`;
  return createLayout(deps, tenant, {
    identifier,
    name: input.name,
    description: source.description,
    content: source.content,
    variables: source.variables,
  });
}

/** The live workflows whose steps use the layout. */
export async function layoutUsage(deps: Deps, tenant: Tenant, ref: string) {
  const layout = await getLayoutByRef(deps, tenant, ref);
  const names = [layout.id, ...(layout.parentId ? [layout.parentId] : [])];
  return workflowsUsingLayout(deps, tenant.environmentId, names);
}
