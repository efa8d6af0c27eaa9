// Command eino-go-capture runs one scripted scenario through CloudWeGo Eino's agent runtime
// against the scripted fake OpenAI server on 127.0.0.1, for the eino-apmplus capture source.
//
// The driver (tools/capture_traces/fw_eino_go.py) writes a spec file naming the prompt, the
// system instruction, the model server's base URL, the OTLP gRPC endpoint of the capture's
// sink and what each tool call returns or fails with. Each agent is an adk.ChatModelAgent on
// eino-ext's OpenAI chat model (its base URL on the fake server) whose tools (utils.NewTool)
// return or fail with what the scenario scripts; a failing tool returns a Go error, which a
// ToolCallMiddleware (Eino's documented hook around a tool call) hands the model as
// {"error": "<the error>"}, so the tool's own callback still sees the failure. g_handoff: the
// triage agent calls the research agent through adk.NewAgentTool (arguments {"request": ...}).
// The run goes through adk.Runner and the program prints one JSON line: the final answer and
// the tools that ran. With "runtime": "react" the same agents run on Eino's older
// flow/agent/react runtime instead (react.NewAgent, its default graph name), g_handoff's
// research agent then run by a research_agent tool of the application's own.
//
// Tracing is eino-ext's APMPlus callback handler (callbacks/apmplus), registered as a global
// Eino callback handler the way its README shows: it builds its own OpenTelemetry tracer and
// meter providers exporting OTLP over gRPC (insecure) to Config.Host, here the capture's sink.
// The handler's shutdown function flushes both before the report is printed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/cloudwego/eino-ext/callbacks/apmplus"
	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
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
	OTLP    string `json:"otlp"`
	Runtime string `json:"runtime"`
	Calls   []call `json:"calls"`
}

// scripted hands out each tool's scripted results in order. Eino's ToolsNode runs the calls
// of one model turn concurrently, so results are queued per tool name, not globally.
type scripted struct {
	mu       sync.Mutex
	queues   map[string][]call
	executed []string
}

func (s *scripted) next(name string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.executed = append(s.executed, name)
	queue := s.queues[name]
	if len(queue) == 0 {
		return nil, fmt.Errorf("no scripted result left for %s", name)
	}
	s.queues[name] = queue[1:]
	if queue[0].Raise != "" {
		return nil, fmt.Errorf("%s", queue[0].Raise)
	}
	return queue[0].OK, nil
}

func param(desc string) *schema.ParameterInfo {
	return &schema.ParameterInfo{Type: schema.String, Desc: desc, Required: true}
}

func scriptedTool(s *scripted, name, desc string, params map[string]*schema.ParameterInfo) tool.BaseTool {
	info := &schema.ToolInfo{Name: name, Desc: desc, ParamsOneOf: schema.NewParamsOneOfByParams(params)}
	return utils.NewTool(info, func(_ context.Context, _ map[string]any) (any, error) {
		return s.next(name)
	})
}

func tools(s *scripted) []tool.BaseTool {
	return []tool.BaseTool{
		scriptedTool(s, "search_docs", "Search the knowledge base and return matching documents.",
			map[string]*schema.ParameterInfo{"query": param("what to search for")}),
		scriptedTool(s, "delete_records", "Delete records from a database table.",
			map[string]*schema.ParameterInfo{"table": param("the table"), "where": param("the filter")}),
		scriptedTool(s, "write_file", "Write a file in the workspace.",
			map[string]*schema.ParameterInfo{"path": param("the file's path"), "content": param("its content")}),
		scriptedTool(s, "run_command", "Run a shell command in the workspace.",
			map[string]*schema.ParameterInfo{"command": param("the command line")}),
	}
}

// errorsToModel hands a failed tool call's error to the model as the call's result, so the
// run goes on (Eino otherwise ends the whole agent run on a tool error).
var errorsToModel = compose.ToolMiddleware{
	Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
		return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
			out, err := next(ctx, in)
			if err != nil {
				body, _ := json.Marshal(map[string]string{"error": err.Error()})
				return &compose.ToolOutput{Result: string(body)}, nil
			}
			return out, nil
		}
	},
}

type report struct {
	Text     string   `json:"text"`
	Executed []string `json:"executed"`
}

func newAgent(ctx context.Context, cm model.ToolCallingChatModel, name, instruction string,
	refs []tool.BaseTool) (adk.Agent, error) {
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        name,
		Description: "the " + name,
		Instruction: instruction,
		Model:       cm,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{
			Tools:               refs,
			ToolCallMiddlewares: []compose.ToolMiddleware{errorsToModel},
		}},
		MaxIterations: 10,
	})
}

// newReact is the same agent on Eino's older flow/agent/react runtime: a ReAct graph (default
// graph name) whose message modifier puts the system instruction first.
func newReact(ctx context.Context, cm model.ToolCallingChatModel, instruction string,
	refs []tool.BaseTool) (*react.Agent, error) {
	return react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: cm,
		ToolsConfig: compose.ToolsNodeConfig{
			Tools:               refs,
			ToolCallMiddlewares: []compose.ToolMiddleware{errorsToModel},
		},
		MessageModifier: func(_ context.Context, input []*schema.Message) []*schema.Message {
			return append([]*schema.Message{schema.SystemMessage(instruction)}, input...)
		},
		MaxStep: 40,
	})
}

// runReact runs the scenario on flow/agent/react; g_handoff's research agent is a ReAct agent
// of its own run by a research_agent tool (this runtime has no agent tool), arguments
// {"request": ...}.
func runReact(ctx context.Context, cm model.ToolCallingChatModel, sp spec, s *scripted) (string, error) {
	entryTools := tools(s)
	instruction := sp.System
	if sp.Handoff {
		research, err := newReact(ctx, cm, sp.System, tools(s))
		if err != nil {
			return "", err
		}
		info := &schema.ToolInfo{
			Name: "research_agent", Desc: "Hand a research question to the research agent.",
			ParamsOneOf: schema.NewParamsOneOfByParams(
				map[string]*schema.ParameterInfo{"request": param("the question")}),
		}
		entryTools = []tool.BaseTool{utils.NewTool(info,
			func(ctx context.Context, in map[string]any) (string, error) {
				request, _ := in["request"].(string)
				answer, err := research.Generate(ctx, []*schema.Message{schema.UserMessage(request)})
				if err != nil {
					return "", err
				}
				return answer.Content, nil
			})}
		instruction = "Hand research questions to research_agent."
	}
	entry, err := newReact(ctx, cm, instruction, entryTools)
	if err != nil {
		return "", err
	}
	answer, err := entry.Generate(ctx, []*schema.Message{schema.UserMessage(sp.Prompt)})
	if err != nil {
		return "", err
	}
	return answer.Content, nil
}

func run(ctx context.Context, sp spec) (report, error) {
	handler, shutdown, err := apmplus.NewApmplusHandler(&apmplus.Config{
		Host: sp.OTLP, AppKey: "capture-not-a-key", ServiceName: sp.Agent,
	})
	if err != nil {
		return report{}, fmt.Errorf("apmplus handler: %w", err)
	}
	callbacks.AppendGlobalHandlers(handler)

	cm, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{
		APIKey: "capture-not-a-key", BaseURL: sp.BaseURL, Model: sp.Model,
	})
	if err != nil {
		return report{}, fmt.Errorf("chat model: %w", err)
	}
	s := &scripted{queues: map[string][]call{}}
	for _, c := range sp.Calls {
		s.queues[c.Tool] = append(s.queues[c.Tool], c)
	}
	if sp.Runtime == "react" {
		text, runErr := runReact(ctx, cm, sp, s)
		if err := shutdown(ctx); err != nil {
			return report{}, fmt.Errorf("telemetry shutdown: %w", err)
		}
		if runErr != nil {
			return report{}, fmt.Errorf("run: %w", runErr)
		}
		return report{Text: text, Executed: append([]string{}, s.executed...)}, nil
	}
	var entry adk.Agent
	if sp.Handoff {
		research, err := newAgent(ctx, cm, "research_agent", sp.System, tools(s))
		if err != nil {
			return report{}, err
		}
		entry, err = newAgent(ctx, cm, "triage_agent", "Hand research questions to research_agent.",
			[]tool.BaseTool{adk.NewAgentTool(ctx, research)})
		if err != nil {
			return report{}, err
		}
	} else if entry, err = newAgent(ctx, cm, sp.Agent, sp.System, tools(s)); err != nil {
		return report{}, err
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: entry})
	events := runner.Query(ctx, sp.Prompt)
	text := ""
	var runErr error
	for {
		event, ok := events.Next()
		if !ok {
			break
		}
		if event.Err != nil {
			runErr = event.Err
			continue
		}
		if event.Output == nil || event.Output.MessageOutput == nil {
			continue
		}
		msg, err := event.Output.MessageOutput.GetMessage()
		if err != nil {
			runErr = err
			continue
		}
		if msg.Role == schema.Assistant && len(msg.ToolCalls) == 0 {
			text = msg.Content
		}
	}
	if err := shutdown(ctx); err != nil {
		return report{}, fmt.Errorf("telemetry shutdown: %w", err)
	}
	if runErr != nil {
		return report{}, fmt.Errorf("run: %w", runErr)
	}
	return report{Text: text, Executed: append([]string{}, s.executed...)}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: eino-go-capture SPEC.json")
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
