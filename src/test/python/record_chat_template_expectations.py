"""Records what transformers' chat-template rendering gives for the cases the Java tests compare.

Writes src/test/resources/comlrl/tokenizer/chat/expectations.json:
  conversations  real templates (the Qwen3, Llama 3 and Llama 3.1 fixtures' tokenizer_config.json
                 through AutoTokenizer.apply_chat_template; the Qwen2.5, Llama 3.1 and Qwen2-VL
                 templates and content-parts-chat-template.jinja of the test resources through
                 transformers' render_jinja_template) applied to conversations whose content is a
                 string, a list of parts ({"type": "text", "text": ...}), or None; each with the
                 rendered text, or the Jinja2 error it raises
  expressions    small templates (None, joins, concatenation, integer arithmetic) rendered in
                 transformers' Jinja2 environment, with their output or error

Run from the repository root after scripts/fetch-fixtures.sh, with the reference Python stack:
  /tmp/pyref/bin/python src/test/python/record_chat_template_expectations.py
"""
import json
import os

import jinja2
import transformers
from transformers import AutoTokenizer
from transformers.utils.chat_template_utils import render_jinja_template

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RESOURCES = os.path.join(ROOT, "src", "test", "resources", "comlrl", "tokenizer")
OUT = os.path.join(RESOURCES, "chat", "expectations.json")

TEXT = lambda t: {"type": "text", "text": t}
TOOL_CALL = {"type": "function", "function": {"name": "get_time", "arguments": {"zone": "UTC"}}}
CONVERSATIONS = {
    "string content": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What time is it?"},
    ],
    "list content": [
        {"role": "system", "content": [TEXT("Be brief.")]},
        {"role": "user", "content": [TEXT(" What time "), TEXT("is it? ")]},
    ],
    "list content with an image": [
        {"role": "user", "content": [{"type": "image"}, TEXT("What is this?")]},
        {"role": "assistant", "content": [TEXT("A cat.")]},
        {"role": "user", "content": "And now?"},
    ],
    "None content with a tool call": [
        {"role": "user", "content": "What time is it?"},
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "content": "10:00"},
    ],
    "None content": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None},
    ],
}
FIXTURES = ["qwen3", "llama3", "llama3_1"]
RESOURCE_TEMPLATES = {
    "qwen2_5-chat-template.jinja": {"bos_token": None, "eos_token": "<|im_end|>"},
    "llama3_1-chat-template.jinja": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "chat/qwen2_vl-chat-template.jinja": {},
    "chat/content-parts-chat-template.jinja": {},
}

EXPRESSIONS = [
    "{{ 10 ** 20 }}", "{{ 2 ** 64 }}", "{{ 9223372036854775807 + 1 }}", "{{ -9223372036854775807 - 10 }}",
    "{{ 3037000500 * 3037000500 }}", "{{ 10 ** 20 // 3 }}", "{{ 10 ** 20 % 7 }}", "{{ -(10 ** 20) }}",
    "{{ 99999999999999999999 + 1 }}", "{{ 10 ** 20 > 10 ** 19 }}", "{{ 10 ** 20 == 100000000000000000000 }}",
    "{{ [9223372036854775807, 1] | sum }}", "{{ (10 ** 20) | string }}", "{{ 2 * 3 ** 2 }}", "{{ 2 ** 3 ** 2 }}",
    "{{ -2 ** 2 }}", "{{ [1, 2] | sum * 10 ** 19 }}", "{{ 2 ** -1 }}", "{{ 2 ** 0.5 }}", "{{ 0 ** 0 }}",
    "{{ -7 // 2 }}", "{{ -7 % 3 }}", "{{ 7 % -3 }}", "{{ 7 // -2 }}", "{{ -7 % -3 }}", "{{ -7.5 // 2 }}",
    "{{ -7.5 % 2 }}", "{{ 7.5 // -2 }}", "{{ 7 / 2 }}", "{{ 6 / 2 }}", "{{ 1 / 3 }}", "{{ 5 // 0 }}", "{{ 5 % 0 }}",
    "{{ 1 / 0 }}", "{{ 1.0 / 0 }}", "{{ 5 % 0.0 }}", "{{ 2.0 ** 2000 }}", "{{ true + 1 }}", "{{ 1 == 1.0 }}",
    "{{ '1' == 1 }}", "{{ none == none }}", "{{ 3 * 'ab' }}", "{{ '-' * 3 }}", "{{ [1] * 2 }}", "{{ 'ab' * 0 }}",
    "{{ [1] + [2] }}", "{{ 'a' + 'b' }}", "{{ 'a' + none }}", "{{ 'a' + 1 }}", "{{ 1 + 'a' }}", "{{ [1] + 'a' }}",
    "{{ {'a': 1} + {'b': 2} }}", "{{ 'x' ~ 2 * 3 }}", "{{ 1 + 2 ~ 'a' }}", "{{ 'a' ~ [1, none, 'b'] }}",
    "{{ 'a' ~ {'k': none} }}", "{{ 'a' ~ true }}", "{{ 'a' ~ 1.5 }}", "{{ [none, 'a', 1, true] | join(',') }}",
    "{{ [{'type': 'text'}] | join }}", "{{ [['a']] | join }}", "{{ 'abc' | join('-') }}",
    "{{ [{'t': 'x'}, {'t': 'y'}] | join('+', attribute='t') }}", "{{ ','.join(['a', 'b']) }}",
    "{{ ','.join([none, 'a']) }}", "{{ ','.join(['a', {'type': 'text'}]) }}", "{{ ','.join([['a']]) }}",
    "{{ ','.join([1]) }}", "{{ ','.join('abc') }}", "{{ 'a' and 'b' }}", "{{ '' and 'b' }}", "{{ 'false' and 1 }}",
    "{{ 'False' or 'x' }}", "{{ not 'false' }}", "{% if 'false' %}T{% else %}F{% endif %}",
    "{{ 'yes' if 'false' else 'no' }}", "{{ [{'v': 'false'}, {'v': ''}, {'v': 'a'}] | selectattr('v') | list }}",
    "{% for x in 5 %}{% endfor %}", "{{ none }}", "{{ None ~ '!' }}", "{% set t = none %}{{ t is defined }} {{ t }}",
    "{{ undefined_name is none }}", "{{ undefined_name == none }}", "{{ undefined_name ~ 'a' }}",
    "{{ [undefined_name, 'a'] | join('/') }}", "{{ {'a': 1}.get('b') }}", "{{ {'a': 1}.get('b') is none }}",
    "{{ 'b' in 'abc' }}", "{{ 1 in [1.0] }}", "{{ 'k' in {'k': 1} }}", "{{ 2 not in [1] }}", "{{ 1 in 'abc' }}",
    "{{ undefined_name in [1] }}", "{{ 'a' in undefined_name }}", "{{ -9223372036854775808 - 1 }}",
]
EXPRESSION_CONVERSATION = [{"role": "user", "content": None, "parts": [TEXT("a"), TEXT("b")], "n": None}]
EXPRESSIONS += [
    "{{ messages[0].content }}", "{{ messages[0].content is none }}", "{{ messages[0].content is defined }}",
    "{{ messages[0].content ~ '!' }}", "{{ messages[0].content | string }}", "{{ messages[0].content | trim }}",
    "{{ messages[0].content | tojson }}", "{{ messages[0] | tojson }}", "{{ messages[0].content | default('d') }}",
    "{% if messages[0].content %}T{% else %}F{% endif %}", "{{ messages[0].content == none }}",
    "{{ messages[0].content or 'empty' }}", "{{ [messages[0].content, 'x'] | join('/') }}",
    "{{ messages[0].parts | map(attribute='text') | join }}", "{{ messages[0].parts }}",
    "{{ messages[0].parts | selectattr('type', 'equalto', 'text') | list | length }}",
    "{{ '<s>' + messages[0].parts }}", "{{ '<s>' + messages[0].content }}", "{{ messages[0].content + '</s>' }}",
    "{% for p in messages[0].content %}{% endfor %}", "{{ 'a' in messages[0].content }}", "{{ tools is none }}",
    "{{ tools is defined }}", "{{ documents is none }}", "{{ messages[0].n ~ 'x' }}",
    "{{ messages[0].missing is defined }} {{ messages[0].missing is none }}",
]


def outcome(render):
    try:
        return {"text": render()}
    except Exception as e:  # the error Jinja2 raises, to compare with ours
        return {"error": type(e).__name__, "message": str(e)}


def main():
    records = []
    for fixture in FIXTURES:
        tok = AutoTokenizer.from_pretrained(os.path.join(ROOT, ".fixtures", fixture + "-tokenizer"))
        for name, messages in CONVERSATIONS.items():
            for gen in (True, False):
                result = outcome(lambda: tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=gen))
                records.append({"template": "fixture:" + fixture, "conversation": name, "messages": messages,
                                "add_generation_prompt": gen, "variables": {}, **result})
    for resource, tokens in RESOURCE_TEMPLATES.items():
        template = open(os.path.join(RESOURCES, resource)).read()
        variables = {k: v for k, v in tokens.items() if v is not None}
        for name, messages in CONVERSATIONS.items():
            for gen in (True, False):
                result = outcome(lambda: render_jinja_template([messages], chat_template=template,
                                                               add_generation_prompt=gen, **variables)[0][0])
                records.append({"template": "resource:" + resource, "conversation": name, "messages": messages,
                                "add_generation_prompt": gen, "variables": variables, **result})
    expressions = []
    for template in EXPRESSIONS:
        result = outcome(lambda: render_jinja_template([EXPRESSION_CONVERSATION], chat_template=template)[0][0])
        expressions.append({"template": template, **result})
    with open(OUT, "w") as f:
        json.dump({"transformers": transformers.__version__, "jinja2": jinja2.__version__,
                   "expression_messages": EXPRESSION_CONVERSATION, "conversations": records,
                   "expressions": expressions}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
