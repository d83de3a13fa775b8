import { useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import { Problem, useLoad } from "../common.tsx";
import type { Group } from "../types.ts";

function GroupRow({
  group,
  onChanged,
  onError,
}: {
  group: Group;
  onChanged: () => void;
  onError: (m: string) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(group.name);
  async function rename(event: Event) {
    event.preventDefault();
    try {
      await ok(
        api.PATCH("/v1/notification-groups/{id}", { params: { path: { id: group._id } }, body: { name } }),
      );
      setEditing(false);
      onChanged();
    } catch (failure) {
      onError((failure as Error).message);
    }
  }
  async function remove() {
    if (!confirm(`Delete the group “${group.name}”?`)) return;
    try {
      await ok(api.DELETE("/v1/notification-groups/{id}", { params: { path: { id: group._id } } }));
      onChanged();
    } catch (failure) {
      onError(`“${group.name}” was not deleted: ${(failure as Error).message}`);
    }
  }
  return (
    <li>
      {editing ? (
        <form class="inline" onSubmit={rename}>
          <label for={`rename-${group._id}`}>New name for {group.name}</label>
          <input
            id={`rename-${group._id}`}
            type="text"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
          <button type="submit">Save name</button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <>
          <span class="group-name">{group.name}</span>
          <button type="button" aria-label={`Rename ${group.name}`} onClick={() => setEditing(true)}>
            Rename
          </button>
          <button type="button" aria-label={`Delete ${group.name}`} onClick={remove}>
            Delete
          </button>
        </>
      )}
    </li>
  );
}

export function Groups() {
  const { data, error, reload, setError } = useLoad(() => ok(api.GET("/v1/notification-groups")), []);
  const [name, setName] = useState("");
  async function create(event: Event) {
    event.preventDefault();
    try {
      await ok(api.POST("/v1/notification-groups", { body: { name } }));
      setName("");
      await reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  return (
    <section aria-labelledby="groups-title">
      <h1 id="groups-title">Groups</h1>
      <form class="inline" onSubmit={create} aria-label="New group">
        <label for="group-name">Name</label>
        <input
          id="group-name"
          type="text"
          required
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <button type="submit">Create</button>
      </form>
      <Problem message={error} />
      <ul class="groups" aria-label="Groups">
        {(data?.data ?? []).map((group) => (
          <GroupRow key={`${group._id}:${group.name}`} group={group} onChanged={reload} onError={setError} />
        ))}
      </ul>
    </section>
  );
}
