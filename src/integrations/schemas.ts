import { type Static, Type } from "typebox";
import { FreeObject, ObjectIdString } from "../http/schema-helpers.ts";
import { PROVIDERS } from "../providers/index.ts";

const Text = (description: string) => Type.String({ maxLength: 4096, description });
const Flag = (description: string) => Type.Boolean({ description });

/**
 * Novu's credential fields (ICredentials), each with its type. Secret ones (password, apiKey,
 * secretKey, token, apiToken, accessKey, serviceAccount, authenticationTokenKey) are masked in
 * every response; sending the mask back in an update keeps the stored value.
 */
export const CredentialsSchema = Type.Object(
  {
    apiKey: Type.Optional(Text("Secret")),
    user: Type.Optional(Text("SMTP: the login")),
    secretKey: Type.Optional(Text("Secret")),
    domain: Type.Optional(Text("")),
    password: Type.Optional(Text("SMTP: the password (secret)")),
    host: Type.Optional(Text("SMTP: the server's host name or address")),
    port: Type.Optional(
      Type.Union([Type.String({ maxLength: 5 }), Type.Integer()], {
        description: "SMTP: the server's port (Novu sends it as a string)",
      }),
    ),
    secure: Type.Optional(Flag("SMTP: TLS from the first byte (port 465); otherwise STARTTLS when offered")),
    region: Type.Optional(Text("")),
    accountSid: Type.Optional(Text("")),
    messageProfileId: Type.Optional(Text("")),
    token: Type.Optional(Text("Secret")),
    from: Type.Optional(Text("Email: the sender's address")),
    senderName: Type.Optional(Text("Email: the sender's name")),
    contentType: Type.Optional(Text("")),
    applicationId: Type.Optional(Text("")),
    clientId: Type.Optional(Text("")),
    projectName: Type.Optional(Text("")),
    serviceAccount: Type.Optional(Type.String({ maxLength: 65_536, description: "Secret" })),
    baseUrl: Type.Optional(Text("")),
    webhookUrl: Type.Optional(Text("")),
    requireTls: Type.Optional(Flag("SMTP: refuse a server that does not offer STARTTLS")),
    ignoreTls: Type.Optional(Flag("SMTP: do not use STARTTLS even when offered")),
    tlsOptions: Type.Optional(FreeObject("SMTP: TLS options (stored, not used)")),
    redirectUrl: Type.Optional(Text("")),
    hmac: Type.Optional(Flag("")),
    ipPoolName: Type.Optional(Text("")),
    apiKeyRequestHeader: Type.Optional(Text("")),
    secretKeyRequestHeader: Type.Optional(Text("")),
    idPath: Type.Optional(Text("")),
    datePath: Type.Optional(Text("")),
    authenticateByToken: Type.Optional(Flag("")),
    authenticationTokenKey: Type.Optional(Text("Secret")),
    accessKey: Type.Optional(Text("Secret")),
    instanceId: Type.Optional(Text("")),
    apiToken: Type.Optional(Text("Secret")),
    apiURL: Type.Optional(Text("")),
    appID: Type.Optional(Text("")),
    alertUid: Type.Optional(Text("")),
    title: Type.Optional(Text("")),
    imageUrl: Type.Optional(Text("")),
    state: Type.Optional(Text("")),
    externalLink: Type.Optional(Text("")),
    channelId: Type.Optional(Text("")),
    phoneNumberIdentification: Type.Optional(Text("")),
    apiVersion: Type.Optional(Text("")),
  },
  { additionalProperties: false, title: "IntegrationCredentials" },
);

const PROVIDER_IDS = PROVIDERS.map((p) => p.id);
const ProviderIdSchema = Type.String({
  maxLength: 100,
  description: `The provider: ${PROVIDER_IDS.join(", ")}`,
  examples: ["nodemailer"],
});
const ChannelSchema = Type.String({
  maxLength: 20,
  description: "The provider's channel: email for nodemailer, chat for the others",
  examples: ["email"],
});
const Conditions = Type.Array(FreeObject(), {
  maxItems: 20,
  description: "Novu's conditions (stored and returned; not applied)",
});
const Identifier = Type.String({
  pattern: "^[A-Za-z0-9_.-]{1,100}$",
  description: "Unique in the environment; letters, digits, `_`, `.` and `-`. Generated when absent.",
});

export const CreateIntegrationBody = Type.Object(
  {
    providerId: ProviderIdSchema,
    channel: ChannelSchema,
    credentials: Type.Optional(CredentialsSchema),
    active: Type.Optional(Type.Boolean({ description: "Default false, as in Novu" })),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    identifier: Type.Optional(Identifier),
    check: Type.Optional(
      Type.Boolean({
        description:
          "Connect to the provider before saving (SMTP: connect and log in); 400 when it fails. Default false.",
      }),
    ),
    conditions: Type.Optional(Conditions),
    _environmentId: Type.Optional(ObjectIdString("Must be the API key's environment when sent")),
  },
  { additionalProperties: false },
);
export type CreateIntegrationInput = Static<typeof CreateIntegrationBody>;

export const UpdateIntegrationBody = Type.Object(
  {
    credentials: Type.Optional(CredentialsSchema),
    active: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    identifier: Type.Optional(Identifier),
    check: Type.Optional(Type.Boolean({ description: "As for create" })),
    conditions: Type.Optional(Conditions),
    _environmentId: Type.Optional(ObjectIdString("Must be the API key's environment when sent")),
  },
  { additionalProperties: false },
);
export type UpdateIntegrationInput = Static<typeof UpdateIntegrationBody>;

export const IntegrationIdParams = Type.Object({ integrationId: ObjectIdString("The integration's id") });
export const ProviderIdParams = Type.Object({
  providerId: Type.String({ pattern: "^[A-Za-z0-9_-]{1,100}$", description: "The provider's id" }),
});

/** Novu's channel types (ChannelTypeEnum). */
export const CHANNEL_TYPES = ["in_app", "email", "sms", "chat", "push"] as const;

export const ChannelTypeParams = Type.Object({
  channelType: Type.Unsafe<(typeof CHANNEL_TYPES)[number]>({
    type: "string",
    enum: [...CHANNEL_TYPES],
    description: "A channel: in_app, email, sms, chat or push",
  }),
});

export const IntegrationResource = Type.Object(
  {
    _id: ObjectIdString("The integration's id"),
    _environmentId: ObjectIdString("Its environment"),
    _organizationId: ObjectIdString("Its organization"),
    providerId: Type.String(),
    channel: Type.String(),
    name: Type.String(),
    identifier: Type.String(),
    credentials: FreeObject("The credentials, each secret masked as ********"),
    active: Type.Boolean(),
    primary: Type.Boolean({ description: "Whether set-primary chose it for its channel" }),
    priority: Type.Integer({ description: "1 for the channel's primary, else 0" }),
    conditions: Type.Array(FreeObject()),
    deleted: Type.Boolean({ description: "Always false: a deleted integration is gone" }),
    deletedAt: Type.String(),
    deletedBy: Type.String(),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Integration", additionalProperties: false },
);
export type IntegrationResourceValue = Static<typeof IntegrationResource>;

export const IntegrationList = Type.Object(
  { data: Type.Array(IntegrationResource) },
  { title: "IntegrationList", additionalProperties: false },
);

// ---------------------------------------------------------------- a test email

const EmailAddress = Type.String({ maxLength: 320, format: "email" });

export const TestEmailBody = Type.Object(
  {
    to: Type.Union([EmailAddress, Type.Array(EmailAddress, { minItems: 1, maxItems: 10 })], {
      description: "Whom to send it to: an address, or up to 10",
    }),
    subject: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: "A Handlebars template, as a step's",
    }),
    content: Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(FreeObject(), { maxItems: 100 })], {
      description: "The HTML, or the editor's blocks; a Handlebars template rendered with `payload`",
    }),
    contentType: Type.Optional(
      Type.Unsafe<"customHtml" | "editor">({ type: "string", enum: ["customHtml", "editor"] }),
    ),
    payload: Type.Optional(FreeObject("The variables the subject and content are rendered with")),
    preheader: Type.Optional(Type.String({ maxLength: 1000 })),
    integrationId: Type.Optional(
      ObjectIdString(
        "Send through this email integration (active or not); default: the primary active one, as Novu",
      ),
    ),
    // Sent by Novu's dashboard; not used here.
    layoutId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    bridge: Type.Optional(Type.Boolean()),
    stepId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    workflowId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    controls: Type.Optional(FreeObject()),
  },
  { additionalProperties: false },
);
export type TestEmailInput = Static<typeof TestEmailBody>;

export const TestEmailSent = Type.Object(
  {
    data: Type.Object(
      {
        integrationId: ObjectIdString("The integration it went through"),
        identifier: Type.String({ description: "That integration's identifier" }),
        to: Type.Array(Type.String(), { description: "The addresses the SMTP server accepted it for" }),
      },
      { additionalProperties: false },
    ),
  },
  { title: "TestEmailSent", additionalProperties: false },
);
