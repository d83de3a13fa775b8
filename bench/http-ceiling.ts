// The HTTP ceiling: a bare node:http server that answers every request with the same bytes the
// real endpoint returned (status, headers, body), captured from the service beforehand. No
// routing, no parsing beyond what node:http does, no database. Spec: the JSON file named by argv[2].
import fs from "node:fs";
import http from "node:http";

export interface CapturedResponse {
  status: number;
  /** Header name/value pairs as sent, less those node:http sets itself (date, connection, keep-alive). */
  headers: [string, string][];
  bodyBase64: string;
}

const spec = JSON.parse(fs.readFileSync(process.argv[2] ?? "", "utf8")) as CapturedResponse & {
  port: number;
};
const body = Buffer.from(spec.bodyBase64, "base64");
const headers = spec.headers.flat();

const server = http.createServer((req, res) => {
  // The body is drained, unread: the ceiling is what answering costs, nothing more.
  req.resume();
  req.once("end", () => {
    res.writeHead(spec.status, headers);
    res.end(body);
  });
});
// The service's own keep-alive (72 s) so connections behave the same.
server.keepAliveTimeout = 72_000;
server.listen(spec.port, "127.0.0.1");
process.once("SIGTERM", () => process.exit(0));
