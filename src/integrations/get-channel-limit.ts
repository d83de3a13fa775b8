import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePlugin } from "../http/types.ts";
import { ChannelTypeParams } from "./schemas.ts";
import { channelLimit } from "./service.ts";

export const getChannelLimitRoute: RoutePlugin = async (app) => {
  app.get(
    "/integrations/:channelType/limit",
    {
      schema: {
        operationId: "getChannelLimit",
        tags: ["Integrations"],
        summary: "The monthly limit of the built-in providers of a channel: none",
        description:
          "Novu Cloud's free providers send a few emails and SMS a month, and this says how many and how many " +
          "were sent. Tidings has no built-in providers: it answers what Novu answers where they are not set " +
          "up, `{limit: 0, count: 0}`.",
        params: ChannelTypeParams,
        response: {
          200: described(
            Envelope(
              Type.Object(
                {
                  limit: Type.Integer({ description: "0: there is no built-in provider" }),
                  count: Type.Integer({ description: "0: nothing was sent through one" }),
                },
                { additionalProperties: false },
              ),
            ),
            "The limit and what was sent",
          ),
          ...errorResponsesOf({ 400: "channelType is not one of in_app, email, sms, chat, push" }),
        },
      },
    },
    async (request) => ({ data: channelLimit(request.params.channelType) }),
  );
};
