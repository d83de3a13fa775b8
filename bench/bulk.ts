/** How many subscribers one bulk request of the benchmark upserts (the API allows 500). */
export const BULK_SIZE = 500;
