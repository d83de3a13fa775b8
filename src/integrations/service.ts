import { randomBytes } from "node:crypto";
import slugify from "slugify";
import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { previewStep } from "../engine/service.ts";
import { badRequest, conflict, type FieldError, invalidField, mention, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import { displayName } from "../names.ts";
import { PROVIDERS, ProviderError, type ProviderInfo, providerInfo } from "../providers/index.ts";
import { hasOnlineSubscriberContaining } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { type Credentials, type Integration, MASK, SECRET_FIELDS } from "./domain.ts";
import * as repo from "./repository.ts";
import type { CreateIntegrationInput, TestEmailInput, UpdateIntegrationInput } from "./schemas.ts";
import { emailSender } from "./senders.ts";
import { smtpSettingsOf } from "./smtp-settings.ts";
import { type IntegrationTools, sealing } from "./tools.ts";

export { MissingSecretKeyError, resolveSecretKey, SecretBox } from "../store/secret-box.ts";
export { channelSenders } from "./senders.ts";
export { type IntegrationTools, openIntegrationTools } from "./tools.ts";

const integrationNotFound = (id: string) =>
  notFound(`Integration ${mention(id, "with this id")} was not found`);

function checkEnvironment(tenant: Tenant, environmentId: string | undefined): void {
  if (environmentId !== undefined && environmentId !== tenant.environmentId) {
    throw invalidField("_environmentId", "must be the environment of the API key");
  }
}

function providerOf(providerId: string): ProviderInfo {
  const provider = providerInfo(providerId);
  if (!provider) {
    throw invalidField("providerId", `must be one of ${PROVIDERS.map((p) => p.id).join(", ")}`);
  }
  return provider;
}

/** The sent credentials without absent fields; a secret sent back as the mask keeps its stored value. */
function mergeCredentials(sent: Credentials, stored: Credentials | undefined): Credentials {
  const merged: Credentials = {};
  for (const [field, value] of Object.entries(sent)) {
    if (value === undefined) continue;
    merged[field] = SECRET_FIELDS.includes(field) && value === MASK ? stored?.[field] : value;
  }
  for (const field of Object.keys(merged)) if (merged[field] === undefined) delete merged[field];
  return merged;
}

/**
 * The credential fields that say where, as whom and how securely a provider is reached: a change
 * to any of them sends the secrets somewhere else. Compared by the value they take effect as (port
 * "587" and 587 alike).
 */
const DESTINATION_FIELDS = [
  "host",
  "port",
  "user",
  "username",
  "secure",
  "requireTls",
  "ignoreTls",
  "tlsOptions",
  "baseUrl",
  "apiURL",
  "webhookUrl",
] as const;

function destinationValue(field: string, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (field === "secure" || field === "requireTls" || field === "ignoreTls") return String(value === true);
  if (field === "port") return String(Number(typeof value === "string" ? value.trim() : value));
  if (field === "host") return String(value).trim().toLowerCase();
  return typeof value === "string" ? value.trim() : JSON.stringify(value);
}

/**
 * A stored secret goes only where it was given for: an update that changes the destination (host,
 * port, login, TLS) must carry each stored secret again, not its mask nor nothing. Otherwise one
 * API key could point the integration at its own server and receive the password (the `check`, or
 * the next email, would log in there with it). 400 naming the secret and the change.
 */
function requireSecretsForNewDestination(sent: Credentials, stored: Credentials | undefined): void {
  if (!stored) return;
  const changed = DESTINATION_FIELDS.filter(
    (field) => destinationValue(field, sent[field]) !== destinationValue(field, stored[field]),
  );
  const [first] = changed;
  if (first === undefined) return;
  const errors: FieldError[] = [];
  for (const field of SECRET_FIELDS) {
    const kept = stored[field];
    if (kept === undefined || kept === "") continue;
    const value = sent[field];
    if (value !== undefined && value !== MASK) continue;
    errors.push({
      field: `credentials.${field}`,
      message:
        `must be sent again (not ${value === MASK ? "masked" : "left out"}) when ` +
        `${changed.map((c) => `credentials.${c}`).join(", ")} change${changed.length > 1 ? "" : "s"}: ` +
        "a stored secret only goes to the server it was given for",
    });
  }
  const [error] = errors;
  if (error) throw badRequest(`${error.field} ${error.message}`, errors);
}

/**
 * The provider's required credentials, when the integration is to be active, and an SMTP host that
 * names an internal address the outbound policy refuses (whether active or not); 400 naming each.
 */
function checkCredentials(
  provider: ProviderInfo,
  credentials: Credentials,
  active: boolean,
  tools: IntegrationTools,
): void {
  if (provider.id !== "nodemailer") return;
  const errors: FieldError[] = [];
  const { problems } = smtpSettingsOf(credentials);
  const host = typeof credentials.host === "string" ? credentials.host.trim() : "";
  const refused = host === "" ? undefined : tools.outbound.refusalOf(host);
  if (refused !== undefined) problems.host ??= `must not name an internal address: ${refused}`;
  for (const [field, problem] of Object.entries(problems)) {
    const required = problem === "is required";
    if (required && !active) continue;
    errors.push({
      field: `credentials.${field}`,
      message: required ? "is required for an active nodemailer integration" : problem,
    });
  }
  const [first] = errors;
  if (first) throw badRequest(`${first.field} ${first.message}`, errors);
}

/** `check: true`: the provider must answer before the integration is saved. */
async function checkProvider(tools: IntegrationTools, provider: ProviderInfo, credentials: Credentials) {
  if (provider.id !== "nodemailer") return;
  const { settings } = smtpSettingsOf(credentials);
  if (!settings)
    throw invalidField("credentials", "are incomplete: the SMTP check needs host, port and from");
  try {
    await tools.pools.verify(settings.smtp);
  } catch (error) {
    const reason = error instanceof ProviderError ? error.message : "it did not answer";
    throw badRequest(`The SMTP check failed: ${reason}`);
  }
}

function newIdentifier(name: string): string {
  const slug = slugify(name, { lower: true, strict: true, trim: true }).slice(0, 60) || "integration";
  return `${slug}-${randomBytes(4).toString("hex")}`;
}

export async function createIntegration(
  deps: Deps,
  tenant: Tenant,
  input: CreateIntegrationInput,
  tools: IntegrationTools,
): Promise<Integration> {
  const { seal, unseal } = sealing(tools);
  checkEnvironment(tenant, input._environmentId);
  const provider = providerOf(input.providerId);
  if (input.channel !== provider.channel) {
    throw invalidField("channel", `must be ${provider.channel} for the ${provider.id} provider`);
  }
  const active = input.active ?? false;
  const credentials = mergeCredentials(input.credentials ?? {}, undefined);
  checkCredentials(provider, credentials, active, tools);
  const name = displayName(input.name ?? provider.displayName);
  if (input.check) await checkProvider(tools, provider, credentials);
  const now = isoNow(deps.clock);
  const created = await repo.insertIntegration(
    deps.db,
    {
      id: newObjectId(deps.clock.now()),
      organizationId: tenant.organizationId,
      environmentId: tenant.environmentId,
      providerId: provider.id,
      channel: provider.channel,
      name,
      identifier: input.identifier ?? newIdentifier(name),
      credentials,
      active,
      primary: false,
      conditions: input.conditions ?? [],
      createdAt: now,
      updatedAt: now,
    },
    seal,
    unseal,
  );
  if (!created) throw conflict("Integration with identifier already exists");
  return created;
}

export async function listIntegrations(
  deps: Deps,
  tenant: Tenant,
  tools: IntegrationTools,
  filter: { active?: boolean } = {},
): Promise<Integration[]> {
  return repo.listIntegrations(deps.db, tenant.environmentId, sealing(tools).unseal, filter);
}

export async function updateIntegration(
  deps: Deps,
  tenant: Tenant,
  integrationId: string,
  input: UpdateIntegrationInput,
  tools: IntegrationTools,
): Promise<Integration> {
  const { seal, unseal } = sealing(tools);
  checkEnvironment(tenant, input._environmentId);
  const current = await repo.findIntegration(deps.db, tenant.environmentId, integrationId, unseal);
  if (!current) throw integrationNotFound(integrationId);
  const provider = providerOf(current.providerId);
  if (input.credentials !== undefined)
    requireSecretsForNewDestination(input.credentials, current.credentials);
  const credentials =
    input.credentials !== undefined ? mergeCredentials(input.credentials, current.credentials) : undefined;
  const active = input.active ?? current.active;
  const effective = credentials ?? current.credentials ?? {};
  // An integration turned active, or given new credentials, must be usable.
  if (input.active !== undefined || credentials !== undefined)
    checkCredentials(provider, effective, active, tools);
  const name = input.name !== undefined ? displayName(input.name) : undefined;
  if (input.check) await checkProvider(tools, provider, effective);
  const updated = await inTransaction(deps, async (d) => {
    if (
      input.identifier !== undefined &&
      (await repo.identifierTaken(d.db, tenant.environmentId, input.identifier, integrationId))
    ) {
      throw conflict("Integration with identifier already exists");
    }
    return repo.updateIntegration(
      d.db,
      tenant.environmentId,
      integrationId,
      {
        ...(name !== undefined ? { name } : {}),
        ...(input.identifier !== undefined ? { identifier: input.identifier } : {}),
        ...(credentials !== undefined ? { credentials } : {}),
        ...(input.active !== undefined ? { active: input.active } : {}),
        ...(input.conditions !== undefined ? { conditions: input.conditions } : {}),
        updatedAt: isoNow(d.clock),
      },
      seal,
      unseal,
    );
  });
  if (!updated) throw integrationNotFound(integrationId);
  // The next message builds a pool with the new settings (other processes notice by the settings' hash).
  tools.pools.close(integrationId);
  return updated;
}

/** Deletes the integration for good; answers the environment's remaining integrations (as Novu does). */
export async function deleteIntegration(
  deps: Deps,
  tenant: Tenant,
  integrationId: string,
  tools: IntegrationTools,
): Promise<Integration[]> {
  const { unseal } = sealing(tools);
  const deleted = await repo.deleteIntegration(deps.db, tenant.environmentId, integrationId);
  if (!deleted) throw integrationNotFound(integrationId);
  tools.pools.close(integrationId);
  return repo.listIntegrations(deps.db, tenant.environmentId, unseal);
}

/** Makes the integration its channel's primary (and active); email only, as Novu's primaries. */
export async function setPrimaryIntegration(
  deps: Deps,
  tenant: Tenant,
  integrationId: string,
  tools: IntegrationTools,
): Promise<Integration> {
  const { seal, unseal } = sealing(tools);
  return inTransaction(deps, async (d) => {
    const current = await repo.findIntegration(d.db, tenant.environmentId, integrationId, unseal);
    if (!current) throw integrationNotFound(integrationId);
    if (current.channel !== "email") {
      throw badRequest(
        `Only email integrations have a primary; this one is a ${current.channel} integration`,
      );
    }
    const now = isoNow(d.clock);
    await repo.clearPrimary(d.db, tenant.environmentId, current.channel, integrationId, now);
    const updated = await repo.updateIntegration(
      d.db,
      tenant.environmentId,
      integrationId,
      { primary: true, active: true, updatedAt: now },
      seal,
      unseal,
    );
    if (!updated) throw integrationNotFound(integrationId);
    return updated;
  });
}

/**
 * Whether the provider's delivery-status webhooks are set up for the environment: never yet (no
 * provider reports delivery status to Tidings). 404 when the environment has no integration of it.
 */
export async function webhookProviderStatus(
  deps: Deps,
  tenant: Tenant,
  providerId: string,
  tools: IntegrationTools,
): Promise<boolean> {
  const found = await repo.listIntegrations(deps.db, tenant.environmentId, sealing(tools).unseal, {
    providerId,
  });
  if (found.length === 0) {
    throw notFound(`No integration of provider ${mention(providerId, "with this id")} was found`);
  }
  return false;
}

/**
 * Novu's in-app onboarding check (`GET /v1/integrations/in-app/status`): active once a subscriber
 * whose subscriberId contains `on-boarding-subscriber` (any case: the one Novu's onboarding makes)
 * is online in the environment, as Novu's own rule decides (Novu's sockets mark a subscriber online
 * when its inbox connects; here the online status is what `PATCH .../online-status` set). The in-app
 * channel itself needs no integration in Tidings.
 */
export async function inAppStatus(deps: Deps, tenant: Tenant): Promise<{ active: boolean }> {
  return { active: await hasOnlineSubscriberContaining(deps, tenant, "on-boarding-subscriber") };
}

/**
 * Novu's monthly limit of its own built-in providers for a channel (`GET
 * /v1/integrations/:channelType/limit`: how many emails or SMS Novu Cloud's free providers may send,
 * and have sent this month). Tidings has no built-in providers, so it answers what Novu answers where
 * its providers are not set up (any Novu but its cloud): no limit and no count, `{limit: 0, count: 0}`.
 */
export function channelLimit(_channelType: string): { limit: number; count: number } {
  return { limit: 0, count: 0 };
}

/**
 * Novu's test email (`POST /v1/events/test/email`): the subject and content rendered with the payload
 * as an email step's are, sent at once through the named email integration (active or not: it can be
 * tried before it is switched on), else the channel's primary active one. Nothing is recorded; a
 * refusal is a 400 carrying the provider's reason.
 */
export async function sendTestEmail(
  deps: Deps,
  tenant: Tenant,
  input: TestEmailInput,
  tools: IntegrationTools,
): Promise<{ integration: Integration; to: string[] }> {
  const { unseal } = sealing(tools);
  let integration: Integration | undefined;
  if (input.integrationId !== undefined) {
    integration = await repo.findIntegration(deps.db, tenant.environmentId, input.integrationId, unseal);
    if (!integration) throw integrationNotFound(input.integrationId);
    if (integration.channel !== "email") {
      throw invalidField(
        "integrationId",
        `must name an email integration; this one is ${integration.channel}`,
      );
    }
  } else {
    [integration] = await repo.listIntegrations(deps.db, tenant.environmentId, unseal, {
      active: true,
      channel: "email",
      primaryFirst: true,
    });
    if (!integration) throw badRequest("Missing an active email integration");
  }
  const rendered = await previewStep(
    {
      type: "email",
      subject: input.subject,
      content: input.content,
      ...(input.preheader !== undefined ? { preheader: input.preheader } : {}),
    },
    { payload: input.payload ?? {} },
  );
  if (!rendered?.ok) throw badRequest(rendered?.reason ?? "The email could not be rendered");
  const sender = emailSender(integration, tools);
  const to = [input.to].flat();
  for (const address of to) {
    const result = await sender.send({
      to: address,
      subject: String(rendered.preview.subject ?? ""),
      html: String(rendered.preview.body ?? ""),
      senderName: "",
      deliveryKey: `test-${randomBytes(8).toString("hex")}`,
    });
    if (!result.ok) throw badRequest(`The test email to ${address} was not sent: ${result.error}`);
  }
  return { integration, to };
}
