/**
 * What a migration may need beyond the database: the box that seals secrets (TIDINGS_SECRET_KEY),
 * for those that seal what an older version kept in the clear. Without it, such a migration fails
 * when it finds something to seal (a fresh database has nothing).
 */
export interface MigrationContext {
  readonly secrets?: { seal(plaintext: string, boundTo: string): string } | undefined;
}
