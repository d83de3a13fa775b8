import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { described, Envelope, errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscription, presentSubscriptionPreference } from "../topics/presenter.ts";
import {
  changeSubscriptionPreference,
  getOwnSubscription,
  listOwnSubscriptions,
  type SubscriberSelf,
  subscribe,
  unsubscribe,
  updateOwnSubscription,
} from "../topics/service.ts";
import { CHANNELS, type Channel } from "../workflows/domain.ts";
import {
  CreateSubscriptionBody,
  SubscriptionParams,
  SubscriptionPreferenceParams,
  SubscriptionPreferenceSchema,
  SubscriptionQuery,
  SubscriptionSchema,
  TopicParams,
  Unsubscribed,
  UpdateSubscriptionBody,
  UpdateSubscriptionPreferenceBody,
} from "./preference-schemas.ts";

const self = (request: FastifyRequest): SubscriberSelf => ({
  subscriberRef: request.subscriberSession.subscriber.id,
  subscriberId: request.subscriberSession.subscriber.subscriberId,
});

const listOf = (value: string | string[] | undefined) =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value];

/**
 * The subscriber's own topic subscriptions from Novu's current inbox (docs/engine.md, "Subscribers,
 * topics and preferences"): it joins and leaves topics, and sets per workflow what a trigger to the
 * topic brings it. Another subscriber's subscriptions are not there for it (404, or none).
 */
export const topicSubscriptionsRoute: RoutePlugin = async (app) => {
  app.get(
    "/topics/:topicKey/subscriptions",
    {
      schema: {
        operationId: "listInboxTopicSubscriptions",
        tags: ["Inbox"],
        summary: "The subscriber's subscriptions to the topic (none or one)",
        params: TopicParams,
        response: {
          200: described(Envelope(Type.Array(SubscriptionSchema)), "Its subscription, with its preferences"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: (
        await listOwnSubscriptions(depsOf(app), request.tenant, self(request), request.params.topicKey)
      ).map(presentSubscription),
    }),
  );

  app.get(
    "/topics/:topicKey/subscriptions/:identifier",
    {
      schema: {
        operationId: "getInboxTopicSubscription",
        tags: ["Inbox"],
        summary: "The subscriber's subscription with this identifier; 204 when it has none",
        params: SubscriptionParams,
        querystring: SubscriptionQuery,
        response: {
          200: described(
            Envelope(SubscriptionSchema),
            "The subscription, with its preferences: those stored, or one per workflow asked for",
          ),
          204: NoContent("The subscriber has no such subscription"),
          ...errorResponsesOf({ 404: "A workflow asked for that is not there" }),
        },
      },
    },
    async (request, reply) => {
      const view = await getOwnSubscription(
        depsOf(app),
        request.tenant,
        self(request),
        request.params.topicKey,
        request.params.identifier,
        { workflowIds: listOf(request.query.workflowIds), tags: listOf(request.query.tags) },
      );
      if (!view) return reply.code(204).send(null);
      return { data: presentSubscription(view) };
    },
  );

  app.post(
    "/topics/:topicKey/subscriptions",
    {
      schema: {
        operationId: "createInboxTopicSubscription",
        tags: ["Inbox"],
        summary: "Subscribe the subscriber to the topic (created when there is none)",
        params: TopicParams,
        body: CreateSubscriptionBody,
        response: {
          201: described(Envelope(SubscriptionSchema), "The subscription (as it was, when it existed)"),
          ...errorResponsesOf({
            400: "A bad identifier, name or condition, or a critical workflow turned off",
            404: "A workflow named that is not there",
            409: "Subscribed already under another identifier, or the identifier is another subscriber's",
          }),
        },
      },
    },
    async (request, reply) => {
      const { identifier, name, topic, preferences } = request.body;
      const { view } = await subscribe(depsOf(app), request.tenant, self(request), request.params.topicKey, {
        identifier,
        name,
        topicName: topic?.name,
        preferences,
      });
      return reply.code(201).send({ data: presentSubscription(view) });
    },
  );

  app.patch(
    "/topics/:topicKey/subscriptions/:identifier",
    {
      schema: {
        operationId: "updateInboxTopicSubscription",
        tags: ["Inbox"],
        summary: "Rename the subscriber's subscription, or give it a new set of preferences",
        params: SubscriptionParams,
        body: UpdateSubscriptionBody,
        response: {
          200: described(Envelope(SubscriptionSchema), "The subscription after the change"),
          ...errorResponsesOf({
            400: "A bad name or condition, or a critical workflow turned off",
            404: "No such subscription of the subscriber, or a workflow that is not there",
          }),
        },
      },
    },
    async (request) => ({
      data: presentSubscription(
        await updateOwnSubscription(
          depsOf(app),
          request.tenant,
          self(request),
          request.params.topicKey,
          request.params.identifier,
          request.body,
        ),
      ),
    }),
  );

  app.delete(
    "/topics/:topicKey/subscriptions/:identifier",
    {
      schema: {
        operationId: "deleteInboxTopicSubscription",
        tags: ["Inbox"],
        summary: "Unsubscribe the subscriber from the topic",
        params: SubscriptionParams,
        response: {
          200: described(Unsubscribed, "Unsubscribed, with the subscription's preferences"),
          ...errorResponsesOf({ 404: "No such subscription of the subscriber" }),
        },
      },
    },
    async (request) => {
      await unsubscribe(
        depsOf(app),
        request.tenant,
        self(request),
        request.params.topicKey,
        request.params.identifier,
      );
      return { data: { success: true as const } };
    },
  );

  app.patch(
    "/subscriptions/:identifier/preferences/:workflowId",
    {
      schema: {
        operationId: "updateInboxSubscriptionPreference",
        tags: ["Inbox"],
        summary:
          "Set what one workflow's triggers to the topic bring the subscriber through this subscription",
        params: SubscriptionPreferenceParams,
        body: UpdateSubscriptionPreferenceBody,
        response: {
          200: described(Envelope(SubscriptionPreferenceSchema), "The preference after the change"),
          ...errorResponsesOf({
            400: "A bad condition, or a critical workflow turned off",
            404: "No such subscription of the subscriber, or no such workflow",
            409: "The identifier names subscriptions in several topics",
          }),
        },
      },
    },
    async (request) => {
      const { enabled, condition, ...rest } = request.body;
      const channels: Partial<Record<Channel, boolean>> = {};
      for (const channel of CHANNELS) {
        const value = rest[channel];
        if (value !== undefined) channels[channel] = value;
      }
      const changed = await changeSubscriptionPreference(
        depsOf(app),
        request.tenant,
        self(request),
        request.params.identifier,
        request.params.workflowId,
        { enabled, condition, channels },
      );
      return {
        data: presentSubscriptionPreference(changed.subscription, changed.workflow, changed.preference),
      };
    },
  );
};
