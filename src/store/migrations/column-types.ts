/** Column types that the two backends spell differently, and which backend a migration runs on. */
export interface ColumnTypes {
  readonly dialect: "sqlite" | "postgres";
  readonly boolean: "boolean" | "integer";
  readonly timestamp: "timestamptz" | "text";
}

export const sqliteTypes: ColumnTypes = { dialect: "sqlite", boolean: "integer", timestamp: "text" };
export const postgresTypes: ColumnTypes = {
  dialect: "postgres",
  boolean: "boolean",
  timestamp: "timestamptz",
};
