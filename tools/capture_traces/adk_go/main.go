// Command adk-go-capture runs one scripted scenario through Google's Agent Development Kit for
// Go against a scripted Gemini API server on 127.0.0.1, for the adk-go capture source.
//
// The driver (tools/capture_traces/fw_adk_go.py) writes a spec file naming the prompt, the
// system instruction, the model server's base URL and what each tool call returns or raises;
// this program builds the agents, runs one invocation, and prints one JSON line: the final
// answer, the agent that gave it and the tools that really ran. Telemetry is ADK's own
// (google.golang.org/adk/telemetry): telemetry.New reads OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT from the environment, as ADK documents,
// and its providers are shut down (flushing both batch processors) before the report is
// printed, so a report means the export is complete.
//
// A killed run (z_killed_*, the spec says killed and names a journal file): the program hands
// ADK tracer and logger providers of its own (telemetry.WithTracerProvider /
// WithLoggerProvider) whose simple processors export each span and log record as it ends, to
// the same OTLP/HTTP endpoint, and each tool is appended to the journal as it runs, since the
// scripted model server SIGKILLs this process mid-run and no report is ever printed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/genai"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/telemetry"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
)

// call is what one scripted tool call returns (OK) or raises (Raise), in script order.
type call struct {
	Tool  string          `json:"tool"`
	OK    json.RawMessage `json:"ok,omitempty"`
	Raise string          `json:"raise,omitempty"`
}

type spec struct {
	System  string `json:"system"`
	Prompt  string `json:"prompt"`
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	Agent   string `json:"agent"`
	Handoff bool   `json:"handoff"`
	Calls   []call `json:"calls"`
	Killed  bool   `json:"killed"`
	Journal string `json:"journal"`
}

// scripted hands out each tool's scripted results in order. Calls requested in one model
// turn run concurrently in ADK, so results are queued per tool name, not globally.
type scripted struct {
	mu       sync.Mutex
	queues   map[string][]call
	executed []string
	journal  string
}

func (s *scripted) next(name string) (call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.executed = append(s.executed, name)
	if s.journal != "" { // a killed run: recorded at once, the process dies before any report
		if err := appendLine(s.journal, name); err != nil {
			return call{}, err
		}
	}
	queue := s.queues[name]
	if len(queue) == 0 {
		return call{}, fmt.Errorf("no scripted result left for %s", name)
	}
	s.queues[name] = queue[1:]
	return queue[0], nil
}

// result decodes the scripted value: a JSON object stays a map, anything else is returned as
// is (ADK wraps a non-object result as {"result": ...}).
func result[T any](s *scripted, name string) (T, error) {
	var zero T
	c, err := s.next(name)
	if err != nil {
		return zero, err
	}
	if c.Raise != "" {
		return zero, errors.New(c.Raise)
	}
	var out T
	if err := json.Unmarshal(c.OK, &out); err != nil {
		return zero, fmt.Errorf("%s: scripted result: %w", name, err)
	}
	return out, nil
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"What to look for."`
}

type deleteArgs struct {
	Table string `json:"table" jsonschema:"The table to delete from."`
	Where string `json:"where" jsonschema:"SQL condition selecting the rows."`
}

type writeArgs struct {
	Path    string `json:"path" jsonschema:"File path relative to the workspace."`
	Content string `json:"content" jsonschema:"The whole new file content."`
}

type commandArgs struct {
	Command string `json:"command" jsonschema:"The command line to run."`
}

func tools(s *scripted) ([]tool.Tool, error) {
	var out []tool.Tool
	add := func(t tool.Tool, err error) error {
		if err == nil {
			out = append(out, t)
		}
		return err
	}
	err := errors.Join(
		add(functiontool.New(functiontool.Config{
			Name: "search_docs", Description: "Search the knowledge base and return matching documents.",
		}, func(_ agent.ToolContext, _ searchArgs) (map[string]any, error) {
			return result[map[string]any](s, "search_docs")
		})),
		add(functiontool.New(functiontool.Config{
			Name: "delete_records", Description: "Delete records from a database table.",
		}, func(_ agent.ToolContext, _ deleteArgs) (map[string]any, error) {
			return result[map[string]any](s, "delete_records")
		})),
		add(functiontool.New(functiontool.Config{
			Name: "write_file", Description: "Write a file in the workspace.",
		}, func(_ agent.ToolContext, _ writeArgs) (string, error) {
			return result[string](s, "write_file")
		})),
		add(functiontool.New(functiontool.Config{
			Name: "run_command", Description: "Run a shell command in the workspace.",
		}, func(_ agent.ToolContext, _ commandArgs) (string, error) {
			return result[string](s, "run_command")
		})),
	)
	return out, err
}

type report struct {
	Text     string   `json:"text"`
	Author   string   `json:"author"`
	Executed []string `json:"executed"`
}

// appendLine appends line to the file at path (a killed run's journal).
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, line)
	return err
}

// exportedOnEnd is a killed run's telemetry: tracer and logger providers whose simple
// processors export each span and log record as it ends (the exporters read the same
// OTEL_EXPORTER_OTLP_ENDPOINT as ADK's own), handed to telemetry.New in place of its batch
// processors.
func exportedOnEnd(ctx context.Context, res *resource.Resource) ([]telemetry.Option, error) {
	spans, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("span exporter: %w", err)
	}
	logs, err := otlploghttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("log exporter: %w", err)
	}
	return []telemetry.Option{
		telemetry.WithTracerProvider(sdktrace.NewTracerProvider(
			sdktrace.WithResource(res), sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(spans)),
		)),
		telemetry.WithLoggerProvider(sdklog.NewLoggerProvider(
			sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewSimpleProcessor(logs)),
		)),
	}, nil
}

func run(ctx context.Context, sp spec) (report, error) {
	res := resource.NewSchemaless(attribute.String("service.name", sp.Agent))
	options := []telemetry.Option{telemetry.WithResource(res)}
	if sp.Killed {
		onEnd, err := exportedOnEnd(ctx, res)
		if err != nil {
			return report{}, err
		}
		options = append(options, onEnd...)
	}
	providers, err := telemetry.New(ctx, options...)
	if err != nil {
		return report{}, fmt.Errorf("telemetry: %w", err)
	}
	providers.SetGlobalOtelProviders()

	llm, err := gemini.NewModel(ctx, sp.Model, &genai.ClientConfig{
		APIKey:      "capture-not-a-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: sp.BaseURL, APIVersion: "v1beta"},
	})
	if err != nil {
		return report{}, fmt.Errorf("model: %w", err)
	}
	s := &scripted{queues: map[string][]call{}}
	if sp.Killed {
		s.journal = sp.Journal
	}
	for _, c := range sp.Calls {
		s.queues[c.Tool] = append(s.queues[c.Tool], c)
	}
	toolset, err := tools(s)
	if err != nil {
		return report{}, fmt.Errorf("tools: %w", err)
	}
	var root agent.Agent
	if sp.Handoff {
		research, err := llmagent.New(llmagent.Config{
			Name: "research_agent", Description: "Answers research questions with citations.",
			Model: llm, Instruction: sp.System, Tools: toolset,
		})
		if err != nil {
			return report{}, err
		}
		root, err = llmagent.New(llmagent.Config{
			Name: "triage_agent", Description: "Routes questions to the right agent.",
			Model: llm, Instruction: "Transfer research questions to research_agent.",
			SubAgents: []agent.Agent{research},
		})
		if err != nil {
			return report{}, err
		}
	} else {
		root, err = llmagent.New(llmagent.Config{
			Name: sp.Agent, Description: "Answers with the tools it has.",
			Model: llm, Instruction: sp.System, Tools: toolset,
		})
		if err != nil {
			return report{}, err
		}
	}
	r, err := runner.New(runner.Config{
		AppName: "capture", Agent: root, SessionService: session.InMemoryService(),
		AutoCreateSession: true,
	})
	if err != nil {
		return report{}, err
	}
	var out report
	message := genai.NewContentFromText(sp.Prompt, genai.RoleUser)
	for event, err := range r.Run(ctx, "user", "session-1", message, agent.RunConfig{}) {
		if err != nil {
			return report{}, fmt.Errorf("run: %w", err)
		}
		if event.IsFinalResponse() && event.Content != nil {
			var text []string
			for _, part := range event.Content.Parts {
				text = append(text, part.Text)
			}
			if joined := strings.TrimSpace(strings.Join(text, "")); joined != "" {
				out.Text, out.Author = joined, event.Author
			}
		}
	}
	if err := providers.Shutdown(ctx); err != nil {
		return report{}, fmt.Errorf("telemetry shutdown: %w", err)
	}
	out.Executed = s.executed
	if out.Executed == nil {
		out.Executed = []string{}
	}
	return out, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: adk-go-capture SPEC.json")
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
