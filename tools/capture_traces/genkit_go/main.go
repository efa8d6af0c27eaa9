// Command genkit-go-capture runs one scripted scenario through Firebase Genkit for Go against
// the scripted fake OpenAI server on 127.0.0.1, for the genkit-go capture source.
//
// The driver (tools/capture_traces/fw_genkit_go.py) writes a spec file naming the prompt, the
// system instruction, the model server's base URL and what each tool call returns or fails
// with; this program runs one flow per agent, whose genkit.Generate runs the tool loop
// (genkit.DefineTool tools, WithMaxTurns 10) on the OpenAI plugin of compat_oai with its base
// URL on the fake server, and prints one JSON line: the final answer and the tools that ran.
// A Genkit tool that returns an error ends the whole Generate call, so a failing tool returns
// {"error": "Type: message"} for the model, as the Genkit JS capture does. g_handoff: the
// triage agent's research_agent tool runs the research agent's flow.
//
// Genkit records its actions on the global OpenTelemetry tracer provider (core/tracing); the
// program installs an SDK tracer provider there with a batch processor on the OTLP/HTTP
// protobuf exporter, which reads OTEL_EXPORTER_OTLP_ENDPOINT (the capture's sink), and shuts
// it down, flushing the batch, before the report is printed.
//
// A killed run (z_killed_*, the spec says killed and names a journal file): the provider
// exports each span as it ends (the SDK's syncer, a simple span processor) and each tool is
// appended to the journal as it runs, since the scripted model server SIGKILLs this process
// mid-run and no report is ever printed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/compat_oai/openai"
	"github.com/openai/openai-go/option"
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
	Handoff bool   `json:"handoff"`
	Calls   []call `json:"calls"`
	Killed  bool   `json:"killed"`
	Journal string `json:"journal"`
}

// scripted hands out each tool's scripted results in order. Genkit runs the calls of one
// model turn concurrently, so results are queued per tool name, not globally.
type scripted struct {
	mu       sync.Mutex
	queues   map[string][]call
	executed []string
	journal  string
}

// ran records that the tool name ran; the caller holds mu. A killed run also appends it to
// the journal file at once: the process dies before any report.
func (s *scripted) ran(name string) {
	s.executed = append(s.executed, name)
	if s.journal == "" {
		return
	}
	f, err := os.OpenFile(s.journal, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "journal:", err)
		return
	}
	defer f.Close()
	fmt.Fprintln(f, name)
}

func (s *scripted) next(name string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ran(name)
	queue := s.queues[name]
	if len(queue) == 0 {
		return nil, fmt.Errorf("no scripted result left for %s", name)
	}
	s.queues[name] = queue[1:]
	if queue[0].Raise != "" {
		return map[string]any{"error": queue[0].Raise}, nil
	}
	return queue[0].OK, nil
}

type searchArgs struct {
	Query string `json:"query"`
}

type deleteArgs struct {
	Table string `json:"table"`
	Where string `json:"where"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type commandArgs struct {
	Command string `json:"command"`
}

type questionArgs struct {
	Question string `json:"question"`
}

func tools(g *genkit.Genkit, s *scripted) []ai.ToolRef {
	return []ai.ToolRef{
		genkit.DefineTool(g, "search_docs", "Search the knowledge base and return matching documents.",
			func(_ *ai.ToolContext, _ searchArgs) (any, error) { return s.next("search_docs") }),
		genkit.DefineTool(g, "delete_records", "Delete records from a database table.",
			func(_ *ai.ToolContext, _ deleteArgs) (any, error) { return s.next("delete_records") }),
		genkit.DefineTool(g, "write_file", "Write a file in the workspace.",
			func(_ *ai.ToolContext, _ writeArgs) (any, error) { return s.next("write_file") }),
		genkit.DefineTool(g, "run_command", "Run a shell command in the workspace.",
			func(_ *ai.ToolContext, _ commandArgs) (any, error) { return s.next("run_command") }),
	}
}

type report struct {
	Text     string   `json:"text"`
	Executed []string `json:"executed"`
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

	plugin := &openai.OpenAI{
		APIKey: "capture-not-a-key",
		Opts:   []option.RequestOption{option.WithBaseURL(sp.BaseURL), option.WithMaxRetries(0)},
	}
	g := genkit.Init(ctx, genkit.WithPlugins(plugin))
	model := plugin.Model(g, sp.Model)
	s := &scripted{queues: map[string][]call{}}
	if sp.Killed {
		s.journal = sp.Journal
	}
	for _, c := range sp.Calls {
		s.queues[c.Tool] = append(s.queues[c.Tool], c)
	}
	agentFlow := func(name, system string, refs []ai.ToolRef) func(context.Context, string) (string, error) {
		flow := genkit.DefineFlow(g, name, func(ctx context.Context, prompt string) (string, error) {
			resp, err := genkit.Generate(ctx, g,
				ai.WithModel(model), ai.WithSystem(system), ai.WithPrompt(prompt),
				ai.WithTools(refs...), ai.WithMaxTurns(10),
			)
			if err != nil {
				return "", err
			}
			return resp.Text(), nil
		})
		return flow.Run
	}
	var entry func(context.Context, string) (string, error)
	if sp.Handoff {
		research := agentFlow("research_agent", sp.System, tools(g, s))
		researchTool := genkit.DefineTool(g, "research_agent",
			"Hand a research question to the research agent; returns its answer.",
			func(ctx *ai.ToolContext, in questionArgs) (string, error) {
				s.mu.Lock()
				s.executed = append(s.executed, "research_agent")
				s.mu.Unlock()
				return research(ctx, in.Question)
			})
		entry = agentFlow("triage_agent", "Hand research questions to research_agent.",
			[]ai.ToolRef{researchTool})
	} else {
		entry = agentFlow(sp.Agent, sp.System, tools(g, s))
	}
	text, runErr := entry(ctx, sp.Prompt)
	if err := tp.Shutdown(ctx); err != nil {
		return report{}, fmt.Errorf("tracer shutdown: %w", err)
	}
	if runErr != nil {
		return report{}, fmt.Errorf("run: %w", runErr)
	}
	executed := []string{}
	for _, name := range s.executed {
		if name != "research_agent" {
			executed = append(executed, name)
		}
	}
	return report{Text: text, Executed: executed}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genkit-go-capture SPEC.json")
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
