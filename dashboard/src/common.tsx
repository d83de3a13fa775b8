import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/**
 * Loads with `load` whenever `deps` change; `reload` runs it again. Only the latest request's answer
 * is shown: a search sends one request per pause in typing, and an older answer arriving last must
 * not replace the newer one.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const latest = useRef(0);
  const reload = useCallback(() => {
    const request = ++latest.current;
    setError(null);
    return load().then(
      (answer) => {
        if (request === latest.current) setData(answer);
      },
      (failure: Error) => {
        if (request === latest.current) setError(failure.message);
      },
    );
  }, deps);
  useEffect(() => {
    reload();
  }, [reload]);
  return { data, error, reload, setError };
}

export function Problem({ message }: { message: string | null }) {
  return message ? <p role="alert">{message}</p> : null;
}

/** Previous / next for a list whose API pages from 0. */
export function Pager({
  page,
  hasMore,
  onPage,
  label,
}: {
  page: number;
  hasMore: boolean;
  onPage: (page: number) => void;
  label: string;
}) {
  return (
    <nav aria-label={`${label} pages`} class="pager">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span>Page {page + 1}</span>
      <button type="button" disabled={!hasMore} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}

export const when = (iso: string | undefined) => (iso ? new Date(iso).toLocaleString() : "");

/** A state (delivered, failed, skipped, pending, canceled…) in its colour, with its word: never colour alone. */
export function StateBadge({ state }: { state: string }) {
  return <span class={`state state-${state}`}>{state}</span>;
}

/** An on/off control: a button with role `switch`, named by `label`, its state in aria-checked. */
export function Switch({
  label,
  checked,
  disabled,
  onChange,
}: {
  label: string;
  checked: boolean;
  disabled?: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <button
      type="button"
      role="switch"
      class="switch"
      aria-checked={checked}
      aria-label={label}
      disabled={disabled}
      onClick={() => onChange(!checked)}
    >
      {checked ? "On" : "Off"}
    </button>
  );
}

/** A table's box: a wide table scrolls inside it, so the page never scrolls sideways. */
export function TableWrap({ children }: { children: ComponentChildren }) {
  return <div class="table-wrap">{children}</div>;
}

/** The channels as people read them ("in-app", not "in_app"). */
export const CHANNEL_LABELS: Record<string, string> = {
  in_app: "in-app",
  email: "email",
  sms: "SMS",
  chat: "chat",
  push: "push",
};
export const channelLabel = (channel: string) => CHANNEL_LABELS[channel] ?? channel;
