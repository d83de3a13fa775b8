import type { CreatedOrganization } from "./onboarding/service.ts";

/** What a new user sees once, on the first start: the keys, and a line to try. */
export function firstRunBanner(org: CreatedOrganization, baseUrl: string): string {
  const dev = org.environments.find((env) => env.name === "Development") ?? org.environments[0];
  const lines = [
    "",
    "Tidings created your organization. These API keys are shown once; store them now.",
    "",
    ...org.environments.map((env) => `  ${env.name.padEnd(12)} ${env.apiKey}`),
    "",
    "Try it:",
    `  curl -s ${baseUrl}/v1/notification-groups -H "Authorization: ApiKey ${dev?.apiKey ?? "<key>"}"`,
    "",
    `Dashboard: ${baseUrl}/dashboard (sign in with a key above)`,
    "",
    "More keys: npm run cli -- keys create --environment <environmentId>   (ids: npm run cli -- environments)",
    "",
  ];
  return lines.join("\n");
}
