// The dependency direction of ARCHITECTURE.md, enforced: `npm run lint` fails on a wrong-way import.
//
// Features, lowest first. A feature may import a lower one, and only through that feature's public
// face (service, domain types, schemas, presenter); never a higher one, never another's repository.
const FEATURES = [
  "tenancy",
  "notification-groups",
  "workflows",
  "layouts",
  "feeds",
  "subscribers",
  "topics",
  "tenants",
  "workflow-overrides",
  "onboarding",
  "organizations",
  "environments",
  "engine",
  "events",
  "activity",
  "providers",
  "channels",
  "integrations",
  "inbox",
  "widgets",
];
// Infrastructure every feature may use, and which uses no feature (but for the few types below).
const INFRA =
  "^src/(store|http|errors\\.ts|ids\\.ts|clock\\.ts|deps\\.ts|config\\.ts|outbound\\.ts|bridge-client\\.ts|json-schema\\.ts|ops|idempotency)";
const PUBLIC_FACE = "/(service|domain|schemas|presenter|tenant|index)\\.ts$";

const above = (feature) => FEATURES.slice(FEATURES.indexOf(feature) + 1);

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Files that import each other, through any path, are one piece in disguise.",
      from: { path: "^src" },
      to: { circular: true },
    },
    ...FEATURES.filter((feature) => above(feature).length > 0).map((feature) => ({
      name: `${feature}-imports-no-higher-feature`,
      severity: "error",
      comment: `${feature} sits below ${above(feature).join(", ")}: it may not import them (ARCHITECTURE.md).`,
      from: { path: `^src/${feature}/` },
      to: { path: `^src/(${above(feature).join("|")})/` },
    })),
    {
      name: "lower-feature-through-its-public-face",
      severity: "error",
      comment:
        "Another feature is reached through its service, domain types, schemas or presenter; its repository and routes are its own.",
      from: { path: `^src/(${FEATURES.join("|")})/` },
      to: {
        path: `^src/(${FEATURES.join("|")})/`,
        pathNot: ["^src/$1/", PUBLIC_FACE],
      },
    },
    {
      name: "composition-roots-through-public-faces",
      severity: "error",
      comment:
        "app.ts, main.ts, cli.ts and worker.ts wire features through their services and route plugins.",
      from: { path: "^src/[^/]+\\.ts$" },
      to: {
        path: `^src/(${FEATURES.join("|")})/`,
        pathNot: [PUBLIC_FACE, "/routes\\.ts$"],
      },
    },
    {
      name: "infrastructure-uses-no-feature",
      severity: "error",
      comment: "Shared infrastructure sits under every feature; only the request's Tenant type reaches it.",
      from: { path: INFRA },
      to: {
        path: `^src/(${FEATURES.join("|")})/`,
        pathNot: ["^src/tenancy/(tenant|domain)\\.ts$"],
      },
    },
    {
      name: "auth-uses-tenancy-only",
      severity: "error",
      comment: "Authentication knows keys and tenants, nothing of the features behind them.",
      from: { path: "^src/auth/" },
      to: {
        path: `^src/(${FEATURES.join("|")})/`,
        pathNot: ["^src/tenancy/(tenant|domain|api-keys)\\.ts$"],
      },
    },
    {
      name: "key-claims-open-in-repositories-only",
      severity: "error",
      comment:
        "A key's claim opens only in a statement that re-checks the key (src/auth/key-verifier.ts): services and routes name it through key-claim.ts.",
      from: { path: "^src/", pathNot: ["^src/auth/", "/repository\\.ts$"] },
      to: { path: "^src/auth/key-guard\\.ts$" },
    },
    {
      name: "migrations-are-frozen",
      severity: "error",
      comment:
        "A migration describes the schema as it was; it imports nothing of the app that could change under it.",
      from: { path: "^src/store/migrations/" },
      to: { path: "^src/", pathNot: "^src/store/migrations/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.test\\.ts$" },
    tsPreCompilationDeps: true,
    parser: "swc",
    enhancedResolveOptions: { extensions: [".ts", ".js", ".mjs", ".json"] },
  },
};
