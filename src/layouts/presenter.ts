import type { Layout } from "./domain.ts";

/** Novu's v1 layout. */
export function presentLayout(layout: Layout) {
  return {
    _id: layout.id,
    _organizationId: layout.organizationId,
    _environmentId: layout.environmentId,
    _creatorId: layout.creatorId,
    ...(layout.parentId ? { _parentId: layout.parentId } : {}),
    name: layout.name,
    identifier: layout.identifier,
    description: layout.description,
    channel: "email" as const,
    content: layout.content,
    contentType: "customHtml" as const,
    variables: layout.variables,
    isDefault: layout.isDefault,
    isDeleted: false,
    createdAt: layout.createdAt,
    updatedAt: layout.updatedAt,
  };
}

/** Novu's /v2 layout (@novu/api's LayoutResponseDto). */
export function presentLayoutV2(layout: Layout) {
  return {
    _id: layout.id,
    id: layout.id,
    layoutId: layout.identifier,
    slug: layout.identifier,
    name: layout.name,
    isDefault: layout.isDefault,
    isTranslationEnabled: false,
    createdAt: layout.createdAt,
    updatedAt: layout.updatedAt,
    origin: "novu-cloud" as const,
    type: "REGULAR" as const,
    variables: null,
    controls: { values: { email: { body: layout.content, editorType: "html" as const } } },
  };
}
