// Command openai-go-capture runs one scripted scenario as a chat-completions tool loop on the
// official OpenAI Go SDK (github.com/openai/openai-go/v3) against the scripted fake OpenAI
// server on 127.0.0.1, for the openai-go-otelhttp capture source.
//
// The driver (tools/capture_traces/fw_openai_go.py) writes a spec file naming the prompt, the
// system instruction, the model server's base URL and what each tool call returns or fails
// with. The loop asks the model, runs each tool call it requested (a plain Go function; a
// failing one hands the model {"error": "Type: message"}), appends the results and asks again
// until the model answers, then prints one JSON line: the final answer and the tools that ran.
//
// Tracing is what an application gets from OpenTelemetry's generic HTTP instrumentation and
// nothing GenAI-specific: the SDK's HTTP client transport is otelhttp.NewTransport (one
// client span per request, the HTTP semantic conventions only), inside one span of the
// application's own around the run ("agent_run", no attributes), as a service's request
// handler would hold it. The SDK tracer provider's batch processor feeds the OTLP/HTTP
// protobuf exporter (OTEL_EXPORTER_OTLP_ENDPOINT: the capture's sink) and is shut down,
// flushing it, before the report is printed.
//
// A killed run (z_killed_*, the spec says killed and names a journal file): the provider
// exports through the SDK's syncer (each span sent as it ends) and each tool is appended to
// the journal as it runs, since the scripted model server SIGKILLs this process mid-run and no
// report is ever printed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// call is what one scripted tool call returns (OK) or fails with (Raise), in script order.
type call struct {
	Tool  string `json:"tool"`
	OK    any    `json:"ok,omitempty"`
	Raise string `json:"raise,omitempty"`
}

type spec struct {
	System  string `json:"system"`
	Prompt  string `json:"prompt"`
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	Agent   string `json:"agent"`
	Calls   []call `json:"calls"`
	Killed  bool   `json:"killed"`
	Journal string `json:"journal"`
}

// journal appends name to a killed run's journal file (the process dies before any report).
func journal(path, name string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, name)
	return err
}

type report struct {
	Text     string   `json:"text"`
	Executed []string `json:"executed"`
}

func stringParam(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

func function(name, desc string, props map[string]any) openai.ChatCompletionToolUnionParam {
	required := []string{}
	for key := range props {
		required = append(required, key)
	}
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        name,
		Description: openai.String(desc),
		Parameters: shared.FunctionParameters{
			"type": "object", "properties": props, "required": required,
		},
	})
}

func toolSchemas() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{
		function("search_docs", "Search the knowledge base and return matching documents.",
			map[string]any{"query": stringParam("what to search for")}),
		function("delete_records", "Delete records from a database table.",
			map[string]any{"table": stringParam("the table"), "where": stringParam("the filter")}),
		function("write_file", "Write a file in the workspace.",
			map[string]any{"path": stringParam("the file's path"), "content": stringParam("its content")}),
		function("run_command", "Run a shell command in the workspace.",
			map[string]any{"command": stringParam("the command line")}),
	}
}

func run(ctx context.Context, sp spec) (report, error) {
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return report{}, fmt.Errorf("exporter: %w", err)
	}
	processor := sdktrace.WithBatcher(exporter)
	if sp.Killed {
		processor = sdktrace.WithSyncer(exporter)
	}
	tp := sdktrace.NewTracerProvider(
		processor,
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", sp.Agent))),
	)
	otel.SetTracerProvider(tp)
	client := openai.NewClient(
		option.WithAPIKey("capture-not-a-key"),
		option.WithBaseURL(sp.BaseURL),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport)}),
	)
	queue := sp.Calls
	executed := []string{}
	text, runErr := func() (string, error) {
		ctx, span := tp.Tracer("capture.app").Start(ctx, "agent_run")
		defer span.End()
		messages := []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(sp.System), openai.UserMessage(sp.Prompt),
		}
		for turn := 0; turn < 10; turn++ {
			completion, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model: sp.Model, Messages: messages, Tools: toolSchemas(),
			})
			if err != nil {
				return "", err
			}
			message := completion.Choices[0].Message
			if len(message.ToolCalls) == 0 {
				return message.Content, nil
			}
			messages = append(messages, message.ToParam())
			for _, requested := range message.ToolCalls {
				name := requested.Function.Name
				executed = append(executed, name)
				if sp.Killed {
					if err := journal(sp.Journal, name); err != nil {
						return "", err
					}
				}
				if len(queue) == 0 || queue[0].Tool != name {
					return "", fmt.Errorf("tool %s is not the script's next call", name)
				}
				scripted := queue[0]
				queue = queue[1:]
				var result any = scripted.OK
				if scripted.Raise != "" {
					result = map[string]string{"error": scripted.Raise}
				}
				body, _ := json.Marshal(result)
				messages = append(messages, openai.ToolMessage(string(body), requested.ID))
			}
		}
		return "", fmt.Errorf("no answer in 10 turns")
	}()
	if err := tp.Shutdown(ctx); err != nil {
		return report{}, fmt.Errorf("tracer shutdown: %w", err)
	}
	if runErr != nil {
		return report{}, fmt.Errorf("run: %w", runErr)
	}
	return report{Text: text, Executed: executed}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: openai-go-capture SPEC.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var sp spec
	if err := json.Unmarshal(raw, &sp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := run(context.Background(), sp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
