import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import {
  getInboxGlobalPreference,
  listInboxPreferences,
  updateInboxGlobalPreference,
  updateInboxWorkflowPreference,
} from "../subscribers/service.ts";
import { presentSubscriptionPreference } from "../topics/presenter.ts";
import { bulkUpdateInboxPreferences } from "../topics/service.ts";
import type { Channel } from "../workflows/domain.ts";
import { CHANNELS } from "../workflows/domain.ts";
import { presentGlobal, presentWorkflowPreference } from "./preference-presenter.ts";
import {
  BulkPreferencesBody,
  InboxPreference,
  InboxPreferencesQuery,
  SubscriptionPreferenceSchema,
  UpdateInboxGlobalBody,
  UpdateInboxWorkflowBody,
  WorkflowParams,
} from "./preference-schemas.ts";

const listOf = (value: string | string[] | undefined) =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value];

/** The channels a body sets, and only those. */
function channelsOf(body: Partial<Record<Channel, boolean | undefined>>): Partial<Record<Channel, boolean>> {
  const channels: Partial<Record<Channel, boolean>> = {};
  for (const channel of CHANNELS) {
    const value = body[channel];
    if (value !== undefined) channels[channel] = value;
  }
  return channels;
}

/**
 * The subscriber's preferences from Novu's current inbox (docs/engine.md, "Subscribers, topics and
 * preferences"): the same preferences the API key's routes and the widget read and change, and that
 * the engine honours, shown as the inbox reads them.
 */
export const inboxPreferencesRoute: RoutePlugin = async (app) => {
  const self = (request: { subscriberSession: { subscriber: { id: string; subscriberId: string } } }) => ({
    subscriberRef: request.subscriberSession.subscriber.id,
    subscriberId: request.subscriberSession.subscriber.subscriberId,
  });

  app.get(
    "/preferences",
    {
      schema: {
        operationId: "listInboxPreferences",
        tags: ["Inbox"],
        summary: "The subscriber's global preference, then one per active workflow the filter keeps",
        querystring: InboxPreferencesQuery,
        response: {
          200: described(Envelope(Type.Array(InboxPreference)), "Global first, then workflows oldest first"),
          ...errorResponsesOf({ 400: "A filter that is not one" }),
        },
      },
    },
    async (request) => {
      const { tags, severity, criticality } = request.query;
      const found = await listInboxPreferences(
        depsOf(app),
        request.tenant,
        request.subscriberSession.subscriber.subscriberId,
        { tags: listOf(tags), severities: listOf(severity), criticality },
      );
      return { data: [presentGlobal(found.global), ...found.workflows.map(presentWorkflowPreference)] };
    },
  );

  app.get(
    "/preferences/global",
    {
      schema: {
        operationId: "getInboxGlobalPreference",
        tags: ["Inbox"],
        summary: "The subscriber's global preference, with its schedule",
        response: {
          200: described(Envelope(InboxPreference), "The global preference"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: presentGlobal(
        await getInboxGlobalPreference(
          depsOf(app),
          request.tenant,
          request.subscriberSession.subscriber.subscriberId,
        ),
      ),
    }),
  );

  app.patch(
    "/preferences",
    {
      schema: {
        operationId: "updateInboxGlobalPreference",
        tags: ["Inbox"],
        summary: "Turn channels on or off for every workflow, and/or set the weekly schedule",
        body: UpdateInboxGlobalBody,
        response: {
          200: described(Envelope(InboxPreference), "The global preference after the change"),
          ...errorResponsesOf({ 400: "A field that is not one (a time that is not `hh:mm AM`...)" }),
        },
      },
    },
    async (request) => {
      const { schedule, ...channels } = request.body;
      return {
        data: presentGlobal(
          await updateInboxGlobalPreference(
            depsOf(app),
            request.tenant,
            request.subscriberSession.subscriber.subscriberId,
            { channels: channelsOf(channels), ...(schedule ? { schedule } : {}) },
          ),
        ),
      };
    },
  );

  app.patch(
    "/preferences/bulk",
    {
      schema: {
        operationId: "bulkUpdateInboxPreferences",
        tags: ["Inbox"],
        summary:
          "Change several workflows' preferences, the subscriber's or its topic subscriptions', at once",
        body: BulkPreferencesBody,
        response: {
          200: described(
            Envelope(Type.Array(Type.Union([InboxPreference, SubscriptionPreferenceSchema]))),
            "Each preference after the change, in the order sent (a workflow named twice once)",
          ),
          ...errorResponsesOf({
            400: "No preferences, more than 100, a critical workflow turned off, or a bad condition",
            404: "A workflow or a subscription that is not there",
            409: "A subscription identifier that names subscriptions in several topics",
          }),
        },
      },
    },
    async (request) => {
      const results = await bulkUpdateInboxPreferences(
        depsOf(app),
        request.tenant,
        self(request),
        request.body.preferences.map(
          ({ workflowId, subscriptionIdentifier, enabled, condition, ...channels }) => ({
            workflowId,
            subscriptionIdentifier,
            enabled,
            condition,
            channels: channelsOf(channels),
          }),
        ),
      );
      return {
        data: results.map((result) =>
          result.kind === "workflow"
            ? presentWorkflowPreference(result.preference)
            : presentSubscriptionPreference(result.subscription, result.workflow, result.preference),
        ),
      };
    },
  );

  app.patch(
    "/preferences/:workflowIdOrIdentifier",
    {
      schema: {
        operationId: "updateInboxWorkflowPreference",
        tags: ["Inbox"],
        summary: "Turn one workflow, or some of its channels, on or off for the subscriber",
        params: WorkflowParams,
        body: UpdateInboxWorkflowBody,
        response: {
          200: described(Envelope(InboxPreference), "The workflow's preference after the change"),
          ...errorResponsesOf({ 400: "A critical workflow turned off", 404: "No such workflow" }),
        },
      },
    },
    async (request) => {
      const { enabled, ...channels } = request.body;
      return {
        data: presentWorkflowPreference(
          await updateInboxWorkflowPreference(
            depsOf(app),
            request.tenant,
            request.subscriberSession.subscriber.subscriberId,
            request.params.workflowIdOrIdentifier,
            { channels: channelsOf(channels), ...(enabled !== undefined ? { enabled } : {}) },
          ),
        ),
      };
    },
  );
};
