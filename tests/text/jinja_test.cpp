// The chat-template engine construct by construct: every template in
// tests/fixtures/chat_templates/constructs.json (rendered by jinja2 through
// tools/reference/make_chat_template_fixtures.py) must render the same, or fail where
// jinja2 fails; and each error names the line and the construct.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"
#include "ingot/text/chat/errors.h"
#include "ingot/text/chat/json.h"
#include "ingot/text/chat/template.h"
#include "models/fixture_path.h"

namespace ingot::text::chat {
namespace {

using ingot::testing::fixture_path;
using ojson = nlohmann::ordered_json;

std::string render(std::string_view source, const DictData& vars = {},
                   const RenderLimits& limits = {}) {
  return Template::parse(source, "t.jinja").render(vars, limits);
}

std::string error_of(std::string_view source, const DictData& vars = {},
                     const RenderLimits& limits = {}) {
  try {
    render(source, vars, limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JinjaConstructs, MatchJinja2) {
  std::ifstream f(fixture_path("chat_templates/constructs.json"));
  ASSERT_TRUE(f.good());
  ojson constructs = ojson::parse(f);
  ASSERT_GT(constructs.size(), 100u);
  int outputs = 0, errors = 0;
  for (const ojson& c : constructs) {
    const std::string source = c["template"].get<std::string>();
    SCOPED_TRACE(source);
    DictData vars = value_from_json(c["variables"].dump(), "variables").as_dict();
    if (c.contains("output")) {
      std::string got;
      try {
        got = render(source, vars);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_EQ(got, c["output"].get<std::string>());
      ++outputs;
      continue;
    }
    const ojson& error = c["error"];
    if (error["kind"] == "raise_exception") {
      try {
        render(source, vars);
        ADD_FAILURE() << "expected raise_exception";
      } catch (const TemplateRaised& e) {
        EXPECT_EQ(e.template_message(), error["message"].get<std::string>());
      }
    } else {
      EXPECT_THROW(render(source, vars), Error) << "jinja2: " << error["message"];
    }
    ++errors;
  }
  RecordProperty("outputs", outputs);
  RecordProperty("errors", errors);
}

TEST(Jinja, ErrorsNameOriginAndLine) {
  EXPECT_EQ(error_of("line one\n{{ 1 + }}"),
            "[chat_template] 't.jinja' line 2: unexpected end of print statement '}}'");
  EXPECT_EQ(error_of("a\nb\n{% for x in y %}\n{% endif %}"),
            "[chat_template] 't.jinja' line 4: unexpected '{% endif %}': the innermost open block "
            "expects endfor, else");
  EXPECT_EQ(error_of("\n\n{{ 'never closed"),
            "[chat_template] 't.jinja' line 3: unterminated string literal");
  EXPECT_EQ(error_of("x\n{# no end"),
            "[chat_template] 't.jinja' line 2: missing end of comment tag '#}'");
  EXPECT_EQ(
      error_of("{% if a %}\nx\n"),
      "[chat_template] 't.jinja' line 2: unexpected end of template: the '{% if %}' on line 1 "
      "is never closed (expected 'elif' or 'else' or 'endif')");
  EXPECT_EQ(error_of("{{ x\n| frob }}"),
            "[chat_template] 't.jinja' line 2: no filter named 'frob'");
  EXPECT_EQ(
      error_of("\n{{ missing.attr }}"),
      "[chat_template] 't.jinja' line 2: 'missing' is undefined (reading its attribute 'attr')");
  EXPECT_EQ(error_of("{% set n = 1 %}\n\n{{ n + 'a' }}"),
            "[chat_template] 't.jinja' line 3: unsupported operand type(s) for +: 'int' and 'str'");
  EXPECT_EQ(error_of("{{ 'a' ? 1 }}"),
            "[chat_template] 't.jinja' line 1: unexpected character '?'");
}

TEST(Jinja, UnsupportedConstructsAreNamed) {
  auto unsupported = [](std::string_view source) {
    try {
      render(source);
    } catch (const NotSupportedError& e) {
      return std::string(e.what());
    } catch (const Error& e) {
      return "wrong type: " + std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(unsupported("{% include 'x.jinja' %}"),
            "[chat_template] 't.jinja' line 1: the '{% include %}' tag is not supported by ingot's "
            "chat-template engine (see docs/chat_templates.md)");
  EXPECT_NE(unsupported("\n{% call m() %}x{% endcall %}").find("line 2: the '{% call %}' tag"),
            std::string::npos);
  EXPECT_NE(unsupported("{{ x | wordwrap }}").find("the filter 'wordwrap' is not supported"),
            std::string::npos);
  EXPECT_NE(unsupported("{% for x in y recursive %}{% endfor %}").find("recursive for loops"),
            std::string::npos);
  EXPECT_NE(unsupported("{{ f(*args) }}").find("*args"), std::string::npos);
  EXPECT_NE(unsupported("{{ '%s' % 1 }}").find("printf-style"), std::string::npos);
  EXPECT_NE(unsupported("{{ 'a'.zfill(3) }}").find("'zfill()'"), std::string::npos);
  EXPECT_NE(unsupported("{{ 99999999999999999999 }}").find("64-bit"), std::string::npos);
  EXPECT_NE(unsupported("{{ 9223372036854775807 + 1 }}").find("integer overflow"),
            std::string::npos);
  EXPECT_NE(unsupported("{{ cycler(1, 2) }}").find("'cycler()'"), std::string::npos);
}

TEST(Jinja, RaiseExceptionCarriesTheMessage) {
  try {
    render(
        "ok\n{% if messages | length == 0 %}{{ raise_exception('No messages given!') }}{% endif %}",
        value_from_json(R"({"messages": []})", "v").as_dict());
    FAIL();
  } catch (const TemplateRaised& e) {
    EXPECT_EQ(e.template_message(), "No messages given!");
    EXPECT_STREQ(
        e.what(),
        "[chat_template] 't.jinja' line 2: the template raised an error: No messages given!");
  }
}

TEST(Jinja, UndefinedBehavesLikeJinja2Default) {
  EXPECT_EQ(render("[{{ nope }}][{{ nope | length }}][{{ nope is defined }}][{% for x in nope "
                   "%}x{% endfor %}]"),
            "[][0][False][]");
  EXPECT_EQ(render("{{ nope | default('d') }}{{ nope ~ '!' }}{{ 'yes' if not nope }}"), "d!yes");
  EXPECT_NE(error_of("{{ nope + 1 }}").find("'nope' is undefined"), std::string::npos);
  EXPECT_NE(error_of("{{ nope() }}").find("'nope' is undefined (called)"), std::string::npos);
}

TEST(Jinja, StrftimeNow) {
  std::string year = render("{{ strftime_now('%Y') }}");
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
  EXPECT_EQ(render("{{ strftime_now('') }}"), "");
}

TEST(Jinja, LimitsStopRunawayTemplates) {
  RenderLimits limits;
  limits.max_steps = 100000;
  EXPECT_NE(
      error_of("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
               {}, limits)
          .find("more than 100000 steps"),
      std::string::npos);
  limits = {};
  limits.max_output_bytes = 1000;
  EXPECT_NE(error_of("{% for i in range(1000) %}xx{% endfor %}", {}, limits)
                .find("output exceeds 1000 bytes"),
            std::string::npos);
  limits = {};
  limits.max_work_bytes = 1 << 20;
  EXPECT_NE(error_of("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + "
                     "ns.s %}{% endfor %}",
                     {}, limits)
                .find("built more than"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 9000000000000 }}").find("built more than"), std::string::npos);
  EXPECT_NE(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("nests deeper"),
            std::string::npos);
  std::string deep = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_NE(error_of("{{ " + deep + " }}").find("nests deeper than"), std::string::npos);
  EXPECT_NE(error_of("{{ " + std::string(5000, '[') + " }}").find("unexpected '}', expected ']'"),
            std::string::npos);
  std::string chain = "{{ 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_NE(error_of(chain + " }}").find("nests deeper than"), std::string::npos);
  std::string ifs;
  for (int i = 0; i < 1000; ++i) ifs += "{% if true %}";
  EXPECT_NE(error_of(ifs).find("nests deeper than"), std::string::npos);
}

TEST(Jinja, TemplateIsReusableAndValuesAreImmutable) {
  Template t = Template::parse(
      "{% set ns = namespace(n=0) %}{% for x in xs %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n "
      "}}",
      "t");
  DictData vars = value_from_json(R"({"xs": [1, 2, 3]})", "v").as_dict();
  EXPECT_EQ(t.render(vars), "6");
  EXPECT_EQ(t.render(vars), "6");
}

TEST(Jinja, RejectsInvalidUtf8Templates) {
  EXPECT_NE(error_of("ok\n\xc3(").find("line 2: the template is not valid UTF-8"),
            std::string::npos);
}

}  // namespace
}  // namespace ingot::text::chat
