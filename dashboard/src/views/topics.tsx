import { useState } from "preact/hooks";
import { api, done, ok } from "../api.ts";
import { Pager, Problem, TableWrap, useLoad, when } from "../common.tsx";

const PAGE_SIZE = 20;
const topicHref = (key: string) => `#/topics/${encodeURIComponent(key)}`;

/** The environment's topics, oldest first, and a form that makes one. */
export function Topics() {
  const [page, setPage] = useState(0);
  const [key, setKey] = useState("");
  const [name, setName] = useState("");
  const { data, error, reload, setError } = useLoad(
    () => ok(api.GET("/v1/topics", { params: { query: { page, pageSize: PAGE_SIZE } } })),
    [page],
  );
  async function create(event: Event) {
    event.preventDefault();
    setError(null);
    try {
      await ok(api.POST("/v1/topics", { body: { key: key.trim(), name: name.trim() } }));
      setKey("");
      setName("");
      await reload();
    } catch (failure) {
      setError(`The topic was not created: ${(failure as Error).message}`);
    }
  }
  const rows = data?.data ?? [];
  return (
    <section aria-labelledby="topics-title">
      <h1 id="topics-title">Topics</h1>
      <form class="inline" onSubmit={create} aria-label="New topic">
        <div class="field">
          <label for="topic-key">Key</label>
          <input
            id="topic-key"
            type="text"
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="topic-name">Name</label>
          <input
            id="topic-name"
            type="text"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </div>
        <button type="submit" class="primary">
          Create
        </button>
      </form>
      <Problem message={error} />
      <TableWrap>
        <table>
          <caption class="visually-hidden">Topics, page {page + 1}</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Subscribers</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((topic) => (
              <tr key={topic._id}>
                <td>
                  <a href={topicHref(topic.key)}>
                    <code>{topic.key}</code>
                  </a>
                </td>
                <td>{topic.name}</td>
                <td>{topic.subscribers.length}</td>
                <td>{when(topic.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {data && rows.length === 0 && <p>No topics yet: a topic lets one trigger reach all its subscribers.</p>}
      {data && (
        <Pager
          label="Topic"
          page={page}
          hasMore={(page + 1) * PAGE_SIZE < data.totalCount}
          onPage={setPage}
        />
      )}
    </section>
  );
}

/** One topic: its subscribers, a form that adds one by subscriberId, and a button that removes each. */
export function TopicView({ topicKey }: { topicKey: string }) {
  const path = { path: { topicKey } };
  const { data, error, reload, setError } = useLoad(
    () => ok(api.GET("/v1/topics/{topicKey}", { params: path })),
    [topicKey],
  );
  const [subscriberId, setSubscriberId] = useState("");
  const [status, setStatus] = useState("");
  const topic = data?.data;
  async function add(event: Event) {
    event.preventDefault();
    setError(null);
    setStatus("");
    const id = subscriberId.trim();
    try {
      const added = await ok(
        api.POST("/v1/topics/{topicKey}/subscribers", { params: path, body: { subscribers: [id] } }),
      );
      if (added.data.failed.notFound.length > 0) {
        setError(`No subscriber with the subscriberId “${id}”: create it first.`);
        return;
      }
      setSubscriberId("");
      setStatus(`${id} added.`);
      await reload();
    } catch (failure) {
      setError(`${id} was not added: ${(failure as Error).message}`);
    }
  }
  async function remove(id: string) {
    setError(null);
    setStatus("");
    try {
      await done(
        api.POST("/v1/topics/{topicKey}/subscribers/removal", {
          params: path,
          body: { subscribers: [id] },
        }),
      );
      setStatus(`${id} removed.`);
      await reload();
    } catch (failure) {
      setError(`${id} was not removed: ${(failure as Error).message}`);
    }
  }
  async function removeTopic() {
    if (!confirm(`Delete the topic “${topicKey}”?`)) return;
    try {
      await done(api.DELETE("/v1/topics/{topicKey}", { params: path }));
      location.hash = "#/topics";
    } catch (failure) {
      setError(`The topic was not deleted: ${(failure as Error).message}`);
    }
  }
  return (
    <section aria-labelledby="topic-title">
      <p>
        <a href="#/topics">Back to topics</a>
      </p>
      <h1 id="topic-title">Topic {topic ? topic.name : topicKey}</h1>
      <Problem message={error} />
      {topic && (
        <>
          <dl class="fields">
            <div>
              <dt>Key</dt>
              <dd>
                <code>{topic.key}</code>
              </dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{when(topic.createdAt)}</dd>
            </div>
          </dl>
          <h2>Subscribers</h2>
          <form class="inline" onSubmit={add} aria-label="Add a subscriber">
            <div class="field">
              <label for="topic-subscriber">Subscriber ID</label>
              <input
                id="topic-subscriber"
                type="text"
                required
                value={subscriberId}
                onInput={(e) => setSubscriberId(e.currentTarget.value)}
              />
            </div>
            <button type="submit" class="primary">
              Add
            </button>
          </form>
          <p role="status">{status}</p>
          {topic.subscribers.length === 0 ? (
            <p>No subscribers in this topic.</p>
          ) : (
            <ul class="groups" aria-label={`Subscribers of ${topic.name}`}>
              {topic.subscribers.map((id) => (
                <li key={id}>
                  <a class="group-name" href={`#/subscribers/${encodeURIComponent(id)}`}>
                    {id}
                  </a>
                  <button type="button" aria-label={`Remove ${id}`} onClick={() => remove(id)}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <p>
            <button type="button" class="danger" onClick={removeTopic}>
              Delete topic
            </button>
          </p>
        </>
      )}
    </section>
  );
}
