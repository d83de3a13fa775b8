// A local SMTP server that accepts every message and prints it, so an email step can be tried
// without a mail provider: `npm run mail-sink` (port 1025, or MAIL_SINK_PORT), then an email
// integration with host 127.0.0.1, port 1025, secure false, and Tidings started with
// TIDINGS_OUTBOUND_ALLOW=127.0.0.1 (it connects to no loopback address otherwise). Nothing is
// stored; Ctrl-C stops it.
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

const port = Number(process.env.MAIL_SINK_PORT ?? 1025);
const host = process.env.MAIL_SINK_HOST ?? "127.0.0.1";

const server = new SMTPServer({
  // Plain SMTP without login: any client may hand a message over, as to a development catcher.
  disabledCommands: ["STARTTLS", "AUTH"],
  authOptional: true,
  banner: "Tidings mail sink",
  onData(stream, _session, callback) {
    simpleParser(stream)
      .then((mail) => {
        const to = [mail.to ?? []].flat().map((address) => address.text);
        const lines = [
          `--- ${new Date().toISOString()}`,
          `From:    ${mail.from?.text ?? ""}`,
          `To:      ${to.join(", ")}`,
          `Subject: ${mail.subject ?? ""}`,
          "",
          (mail.text ?? "").trim(),
          "",
        ];
        process.stdout.write(`${lines.join("\n")}\n`);
        callback();
      })
      .catch((error) => callback(error));
  },
});

server.on("error", (error) => {
  console.error(`mail sink: ${error.message}`);
  if (error.code === "EADDRINUSE") process.exit(1);
});

server.listen(port, host, () => {
  console.log(`Mail sink listening on smtp://${host}:${port}; every message received is printed here.`);
});

const stop = () => server.close(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
