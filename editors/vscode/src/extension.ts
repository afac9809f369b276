// The wac extension: `.wa` files get the TextMate grammar (syntaxes/) and a language client that
// starts `wac lsp` (diagnostics, completion, hover, navigation and formatting come from the server).
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const configured = vscode.workspace.getConfiguration("wac").get<string[]>("server.command") ?? ["wac", "lsp"];
  const [command, ...args] = configured.length > 0 ? configured : ["wac", "lsp"];
  const serverOptions: ServerOptions = { command, args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "wac" },
      { scheme: "untitled", language: "wac" },
    ],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.wa") },
  };
  client = new LanguageClient("wac", "wac language server", serverOptions, clientOptions);
  context.subscriptions.push(client);
  await client.start();
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
  }
}
