//! The P4-16 parser: tokens into the syntax tree of `ast.rs`, by recursive descent with P4's
//! operator precedences (bitwise operators bind tighter than comparisons, unlike C).
//!
//! It accepts the declarations Tofino programs and architecture files use. Extern and
//! package declarations are kept only by name (their methods are known to the lowering),
//! and anything outside the subset is a syntax error at its place.

use super::ast::*;
use super::lexer::{Tok, Token};
use super::preprocess::Source;
use super::P4Error;

/// The declarations of a preprocessed program.
pub fn parse(src: &Source, tokens: &[Token]) -> Result<Vec<Decl>, P4Error> {
    let mut p = Parser {
        src,
        toks: tokens,
        at: 0,
        depth: 0,
    };
    let mut out = Vec::new();
    while !p.is_eof() {
        if p.eat(";") {
            continue;
        }
        out.push(p.top_decl()?);
    }
    Ok(out)
}

struct Parser<'a> {
    src: &'a Source,
    toks: &'a [Token],
    at: usize,
    /// Nesting of expressions and statements, bounded so that a deeply nested input is an
    /// error rather than a stack overflow.
    depth: u32,
}

/// Deepest nesting of expressions or statements accepted.
const MAX_DEPTH: u32 = 400;

type R<T> = Result<T, P4Error>;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Int { value, .. } => format!("number {value}"),
        Tok::Str(s) => format!("string \"{s}\""),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Eof => "end of file".to_string(),
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.at.min(self.toks.len() - 1)].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.at + k).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.at.min(self.toks.len() - 1)].span
    }
    fn is_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.at.min(self.toks.len() - 1)].clone();
        if self.at < self.toks.len() - 1 {
            self.at += 1;
        }
        t
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == k)
    }
    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, k: &str) -> bool {
        if self.is_kw(k) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn fail<T>(&self, what: &str) -> R<T> {
        Err(self.src.error(
            self.span(),
            format!(
                "syntax error: expected {what}, found {}",
                describe(self.peek())
            ),
        ))
    }
    fn expect(&mut self, p: &str) -> R<Span> {
        if self.is(p) {
            Ok(self.bump().span)
        } else {
            self.fail(&format!("`{p}`"))
        }
    }
    fn expect_kw(&mut self, k: &str) -> R<Span> {
        if self.is_kw(k) {
            Ok(self.bump().span)
        } else {
            self.fail(&format!("`{k}`"))
        }
    }
    fn ident(&mut self) -> R<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                let sp = self.bump().span;
                Ok((s, sp))
            }
            _ => self.fail("a name"),
        }
    }
    /// A name, also accepting the keywords P4 allows as names in some places.
    fn name(&mut self) -> R<String> {
        self.ident().map(|x| x.0)
    }

    /// Skips a balanced group opened by the current token (`{`, `(` or `<`).
    fn skip_group(&mut self) -> R<()> {
        let (open, close) = match self.peek() {
            Tok::Punct("{") => ("{", "}"),
            Tok::Punct("(") => ("(", ")"),
            Tok::Punct("<") => ("<", ">"),
            _ => return self.fail("`{`"),
        };
        let start = self.span();
        let mut depth = 0;
        loop {
            match self.peek() {
                Tok::Eof => {
                    return Err(self
                        .src
                        .error(start, format!("syntax error: `{open}` is never closed")))
                }
                Tok::Punct(p) if *p == open => depth += 1,
                Tok::Punct(p) if *p == close => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn annotations(&mut self) -> R<Vec<Annotation>> {
        let mut out = Vec::new();
        while self.is("@") {
            let span = self.bump().span;
            let name = self.name()?;
            let mut args = Vec::new();
            if name == "pragma" {
                // P4-14's form, which p4c keeps: `@pragma NAME tokens...` to the end of the
                // line; the tokens are dropped (no pragma of that form is lowered).
                let line = self.toks[self.at - 1].span.line;
                let pname = self.name()?;
                while !self.is_eof() && self.span().line == line {
                    self.bump();
                }
                out.push(Annotation {
                    name: pname,
                    args,
                    span,
                });
                continue;
            }
            if self.is("(") {
                // Annotation bodies are free-form; keep them when they parse as expressions.
                let save = self.at;
                self.bump();
                let mut ok = true;
                if !self.is(")") {
                    loop {
                        match self.expr() {
                            Ok(e) => args.push(e),
                            Err(_) => {
                                ok = false;
                                break;
                            }
                        }
                        if !self.eat(",") {
                            break;
                        }
                    }
                }
                if !ok || !self.eat(")") {
                    self.at = save;
                    args.clear();
                    self.skip_group()?;
                }
            }
            out.push(Annotation { name, args, span });
        }
        Ok(out)
    }

    fn top_decl(&mut self) -> R<Decl> {
        let annotations = self.annotations()?;
        let span = self.span();
        let kind = match self.peek().clone() {
            Tok::Ident(k) => match k.as_str() {
                "typedef" | "type" => {
                    self.bump();
                    let ty = self.ty()?;
                    let name = self.name()?;
                    self.expect(";")?;
                    DeclKind::Typedef { name, ty }
                }
                "header" | "struct" => {
                    self.bump();
                    let name = self.name()?;
                    if self.is("<") {
                        return self
                            .fail("a non-generic declaration (generic types are not supported)");
                    }
                    let fields = self.fields()?;
                    if k == "header" {
                        DeclKind::Header { name, fields }
                    } else {
                        DeclKind::Struct { name, fields }
                    }
                }
                "header_union" => {
                    self.bump();
                    let name = self.name()?;
                    self.skip_group()?;
                    DeclKind::HeaderUnion { name }
                }
                "enum" => self.enum_decl()?,
                "extern" => self.extern_decl()?,
                "match_kind" | "error" => {
                    self.bump();
                    self.expect("{")?;
                    let mut names = Vec::new();
                    while !self.eat("}") {
                        names.push(self.name()?);
                        if !self.eat(",") {
                            self.expect("}")?;
                            break;
                        }
                    }
                    if k == "match_kind" {
                        DeclKind::MatchKind(names)
                    } else {
                        DeclKind::Error(names)
                    }
                }
                "package" => {
                    self.bump();
                    let name = self.name()?;
                    while !self.eat(";") {
                        if self.is_eof() {
                            return self.fail("`;`");
                        }
                        self.bump();
                    }
                    DeclKind::Prototype { name }
                }
                "parser" => self.parser_decl()?,
                "control" => self.control_decl()?,
                _ => return self.local_decl(annotations),
            },
            _ => return self.fail("a declaration"),
        };
        Ok(Decl {
            kind,
            annotations,
            span,
        })
    }

    fn fields(&mut self) -> R<Vec<FieldDecl>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            self.annotations()?;
            let span = self.span();
            let ty = self.ty()?;
            let name = self.name()?;
            self.expect(";")?;
            out.push(FieldDecl { ty, name, span });
        }
        Ok(out)
    }

    fn enum_decl(&mut self) -> R<DeclKind> {
        self.expect_kw("enum")?;
        let underlying = if self.is_kw("bit") || self.is_kw("int") {
            Some(self.ty()?)
        } else {
            None
        };
        let name = self.name()?;
        self.expect("{")?;
        let mut members = Vec::new();
        while !self.eat("}") {
            let m = self.name()?;
            let v = if self.eat("=") {
                Some(self.expr()?)
            } else {
                None
            };
            members.push((m, v));
            if !self.eat(",") {
                self.expect("}")?;
                break;
            }
        }
        Ok(DeclKind::Enum {
            name,
            underlying,
            members,
        })
    }

    fn extern_decl(&mut self) -> R<DeclKind> {
        self.expect_kw("extern")?;
        let (first, _) = self.ident()?;
        if ["bit", "int", "varbit"].contains(&first.as_str()) && self.is("<") {
            self.skip_group()?;
        }
        if let Tok::Ident(_) = self.peek() {
            // A function: `extern T name<..>(params);`.
            let name = self.name()?;
            while !self.eat(";") {
                if self.is_eof() {
                    return self.fail("`;`");
                }
                self.bump();
            }
            return Ok(DeclKind::Extern { name });
        }
        if self.is("<") {
            self.skip_group()?;
        }
        self.skip_group()?;
        Ok(DeclKind::Extern { name: first })
    }

    fn params(&mut self) -> R<Vec<Param>> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            self.annotations()?;
            let span = self.span();
            let dir = if self.eat_kw("in") {
                Dir::In
            } else if self.eat_kw("out") {
                Dir::Out
            } else if self.eat_kw("inout") {
                Dir::InOut
            } else {
                Dir::None
            };
            let ty = self.ty()?;
            let name = self.name()?;
            if self.eat("=") {
                self.expr()?;
            }
            out.push(Param {
                dir,
                ty,
                name,
                span,
            });
            if !self.eat(",") {
                break;
            }
        }
        self.expect(")")?;
        Ok(out)
    }

    fn parser_decl(&mut self) -> R<DeclKind> {
        self.expect_kw("parser")?;
        let name = self.name()?;
        if self.is("<") {
            self.skip_group()?;
        }
        let params = self.params()?;
        if self.eat(";") {
            return Ok(DeclKind::Prototype { name });
        }
        let ctor_params = if self.is("(") {
            self.params()?
        } else {
            Vec::new()
        };
        self.expect("{")?;
        let mut locals = Vec::new();
        let mut states = Vec::new();
        while !self.eat("}") {
            let annotations = self.annotations()?;
            if self.is_kw("state") {
                let span = self.bump().span;
                let sname = self.name()?;
                self.expect("{")?;
                let mut body = Vec::new();
                let mut transition = None;
                while !self.eat("}") {
                    if self.is_kw("transition") {
                        transition = Some(self.transition()?);
                        self.expect("}")?;
                        break;
                    }
                    body.push(self.stmt()?);
                }
                states.push(State {
                    annotations,
                    name: sname,
                    body,
                    transition,
                    span,
                });
            } else {
                locals.push(self.local_decl(annotations)?);
            }
        }
        Ok(DeclKind::Parser {
            name,
            params,
            ctor_params,
            locals,
            states,
        })
    }

    fn transition(&mut self) -> R<Transition> {
        self.expect_kw("transition")?;
        let span = self.span();
        if self.eat_kw("select") {
            self.expect("(")?;
            let mut keys = Vec::new();
            loop {
                keys.push(self.expr()?);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")")?;
            self.expect("{")?;
            let mut cases = Vec::new();
            while !self.eat("}") {
                let cspan = self.span();
                let ks = self.keyset()?;
                let keysets = match ks.kind {
                    ExprKind::List(v) => v,
                    _ => vec![ks],
                };
                self.expect(":")?;
                let next = self.name()?;
                self.expect(";")?;
                cases.push(SelectCase {
                    keysets,
                    next,
                    span: cspan,
                });
            }
            Ok(Transition::Select { keys, cases, span })
        } else {
            let next = self.name()?;
            self.expect(";")?;
            Ok(Transition::Goto(next, span))
        }
    }

    /// A keyset: an expression, optionally `&&& mask` or `.. high`; `default` and `_`.
    fn keyset(&mut self) -> R<Expr> {
        let span = self.span();
        if self.eat_kw("default") || self.eat_kw("_") {
            return Ok(Expr {
                kind: ExprKind::Default,
                span,
            });
        }
        if self.is("(") {
            // A tuple of keysets.
            let save = self.at;
            self.bump();
            let mut items = vec![self.keyset()?];
            if self.is(",") {
                while self.eat(",") {
                    items.push(self.keyset()?);
                }
                self.expect(")")?;
                return Ok(Expr {
                    kind: ExprKind::List(items),
                    span,
                });
            }
            self.at = save;
        }
        let e = self.expr()?;
        for (p, op) in [("&&&", BinOp::Mask), ("..", BinOp::Range)] {
            if self.eat(p) {
                let m = self.expr()?;
                return Ok(Expr {
                    kind: ExprKind::Binary(op, Box::new(e), Box::new(m)),
                    span,
                });
            }
        }
        Ok(e)
    }

    fn control_decl(&mut self) -> R<DeclKind> {
        self.expect_kw("control")?;
        let name = self.name()?;
        if self.is("<") {
            self.skip_group()?;
        }
        let params = self.params()?;
        if self.eat(";") {
            return Ok(DeclKind::Prototype { name });
        }
        let ctor_params = if self.is("(") {
            self.params()?
        } else {
            Vec::new()
        };
        self.expect("{")?;
        let mut locals = Vec::new();
        let mut apply = None;
        while !self.eat("}") {
            let annotations = self.annotations()?;
            if self.is_kw("apply") {
                self.bump();
                apply = Some(self.block()?);
            } else {
                locals.push(self.local_decl(annotations)?);
            }
        }
        let Some(apply) = apply else {
            return self.fail("an `apply` block in the control");
        };
        Ok(DeclKind::Control {
            name,
            params,
            ctor_params,
            locals,
            apply,
        })
    }

    /// A declaration inside a control or parser (and instances at the top level).
    fn local_decl(&mut self, annotations: Vec<Annotation>) -> R<Decl> {
        let span = self.span();
        let kind = if self.eat_kw("action") {
            let name = self.name()?;
            let params = self.params()?;
            let body = self.block()?;
            DeclKind::Action { name, params, body }
        } else if self.eat_kw("table") {
            let name = self.name()?;
            DeclKind::Table {
                name,
                props: self.table_props()?,
            }
        } else if self.eat_kw("const") {
            let ty = self.ty()?;
            let name = self.name()?;
            self.expect("=")?;
            let value = self.expr()?;
            self.expect(";")?;
            DeclKind::Const { name, ty, value }
        } else {
            let ty = self.ty()?;
            if self.is("(") {
                let args = self.args()?;
                let name = self.name()?;
                let mut methods = Vec::new();
                if self.eat("=") {
                    self.expect("{")?;
                    while !self.eat("}") {
                        let ann = self.annotations()?;
                        let mspan = self.span();
                        let ret = self.ty()?;
                        let mname = self.name()?;
                        let params = self.params()?;
                        let body = self.block()?;
                        methods.push(Decl {
                            kind: DeclKind::Function {
                                ret,
                                name: mname,
                                params,
                                body,
                            },
                            annotations: ann,
                            span: mspan,
                        });
                    }
                }
                self.expect(";")?;
                DeclKind::Instance {
                    ty,
                    args,
                    name,
                    methods,
                }
            } else {
                let name = self.name()?;
                if self.is("(") {
                    return self.fail("`;` (function declarations are not supported)");
                }
                let init = if self.eat("=") {
                    Some(self.expr()?)
                } else {
                    None
                };
                self.expect(";")?;
                DeclKind::Var { ty, name, init }
            }
        };
        Ok(Decl {
            kind,
            annotations,
            span,
        })
    }

    fn table_props(&mut self) -> R<Vec<TableProp>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            self.annotations()?;
            let span = self.span();
            let is_const = self.eat_kw("const");
            let name = self.name()?;
            match name.as_str() {
                "key" => {
                    self.expect("=")?;
                    self.expect("{")?;
                    let mut keys = Vec::new();
                    while !self.eat("}") {
                        let kspan = self.span();
                        let expr = self.expr()?;
                        self.expect(":")?;
                        let kind = self.name()?;
                        let annotations = self.annotations()?;
                        self.expect(";")?;
                        keys.push(KeyElem {
                            expr,
                            kind,
                            annotations,
                            span: kspan,
                        });
                    }
                    out.push(TableProp::Key(keys, span));
                }
                "actions" => {
                    self.expect("=")?;
                    self.expect("{")?;
                    let mut acts = Vec::new();
                    while !self.eat("}") {
                        self.annotations()?;
                        let aspan = self.span();
                        let mut e = self.expr()?;
                        // `a();` in an action list names `a` as `a;` does.
                        if let ExprKind::Call { func, targs, args } = &e.kind {
                            if targs.is_empty() && args.is_empty() {
                                e = (**func).clone();
                            }
                        }
                        self.expect(";")?;
                        acts.push((e, aspan));
                    }
                    out.push(TableProp::Actions(acts, span));
                }
                "entries" => {
                    self.expect("=")?;
                    self.expect("{")?;
                    let mut entries = Vec::new();
                    while !self.eat("}") {
                        self.annotations()?;
                        let espan = self.span();
                        let ks = self.keyset()?;
                        let keys = match ks.kind {
                            ExprKind::List(v) => v,
                            _ => vec![ks],
                        };
                        self.expect(":")?;
                        let action = self.expr()?;
                        self.expect(";")?;
                        entries.push(EntryDecl {
                            keys,
                            action,
                            span: espan,
                        });
                    }
                    out.push(TableProp::Entries(entries, span, is_const));
                }
                _ => {
                    self.expect("=")?;
                    let value = self.expr()?;
                    self.expect(";")?;
                    out.push(TableProp::Value {
                        name,
                        value,
                        is_const,
                        span,
                    });
                }
            }
        }
        Ok(out)
    }

    fn ty(&mut self) -> R<Type> {
        self.depth += 1;
        let r = self.ty_inner();
        self.depth -= 1;
        r
    }

    fn ty_inner(&mut self) -> R<Type> {
        self.too_deep()?;
        let (name, _) = self.ident()?;
        let mut t = match name.as_str() {
            "bit" | "int" | "varbit" => {
                let w = if self.eat("<") {
                    let e = self.type_arg_expr()?;
                    self.expect(">")?;
                    e
                } else {
                    Expr {
                        kind: ExprKind::Int {
                            value: 1,
                            width: None,
                        },
                        span: self.span(),
                    }
                };
                match name.as_str() {
                    "bit" => Type::Bit(Box::new(w)),
                    "int" => Type::Int(Box::new(w)),
                    _ => Type::Varbit(Box::new(w)),
                }
            }
            "bool" => Type::Bool,
            "void" => Type::Void,
            _ => {
                let mut targs = Vec::new();
                if self.eat("<") {
                    loop {
                        targs.push(self.ty()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(">")?;
                }
                Type::Named(name, targs)
            }
        };
        if self.is("[") {
            self.bump();
            let n = self.expr()?;
            self.expect("]")?;
            t = Type::Stack(Box::new(t), Box::new(n));
        }
        Ok(t)
    }

    /// A width inside `bit<...>`: a number, a name or a parenthesized expression.
    fn type_arg_expr(&mut self) -> R<Expr> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Int { value, width } => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Int { value, width },
                    span,
                })
            }
            Tok::Ident(n) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Name(n),
                    span,
                })
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            _ => self.fail("a width"),
        }
    }

    fn args(&mut self) -> R<Vec<Expr>> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            // Named arguments `name = value` keep the value.
            if matches!(self.peek(), Tok::Ident(_)) && matches!(self.peek_at(1), Tok::Punct("=")) {
                self.bump();
                self.bump();
            }
            out.push(self.expr()?);
            if !self.eat(",") {
                break;
            }
        }
        self.expect(")")?;
        Ok(out)
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            if self.is_eof() {
                return self.fail("`}`");
            }
            out.push(self.stmt()?);
        }
        Ok(out)
    }

    fn stmt(&mut self) -> R<Stmt> {
        self.depth += 1;
        let r = self.stmt_inner();
        self.depth -= 1;
        r
    }

    fn too_deep(&self) -> R<()> {
        if self.depth > MAX_DEPTH {
            return Err(self.src.error(
                self.span(),
                format!("nesting deeper than {MAX_DEPTH} levels is not supported"),
            ));
        }
        Ok(())
    }

    fn stmt_inner(&mut self) -> R<Stmt> {
        self.too_deep()?;
        let annotations = self.annotations()?;
        let span = self.span();
        let kind = match self.peek().clone() {
            Tok::Punct("{") => StmtKind::Block(self.block()?),
            Tok::Punct(";") => {
                self.bump();
                StmtKind::Empty
            }
            Tok::Ident(k) if k == "if" => {
                self.bump();
                self.expect("(")?;
                let c = self.expr()?;
                self.expect(")")?;
                let then = self.stmt_as_block()?;
                let els = if self.eat_kw("else") {
                    self.stmt_as_block()?
                } else {
                    Vec::new()
                };
                StmtKind::If(c, then, els)
            }
            Tok::Ident(k) if k == "switch" => {
                self.bump();
                self.expect("(")?;
                let e = self.expr()?;
                self.expect(")")?;
                self.expect("{")?;
                let mut cases: Vec<SwitchCase> = Vec::new();
                let mut labels = Vec::new();
                while !self.eat("}") {
                    let lspan = self.span();
                    let label = if self.eat_kw("default") {
                        SwitchLabel::Default
                    } else {
                        SwitchLabel::Name(self.name()?)
                    };
                    self.expect(":")?;
                    labels.push((label, lspan));
                    if self.is("{") {
                        let body = self.block()?;
                        cases.push((std::mem::take(&mut labels), body));
                    }
                }
                if !labels.is_empty() {
                    cases.push((labels, Vec::new()));
                }
                StmtKind::Switch(e, cases)
            }
            Tok::Ident(k) if k == "exit" => {
                self.bump();
                self.expect(";")?;
                StmtKind::Exit
            }
            Tok::Ident(k) if k == "return" => {
                self.bump();
                let v = if self.is(";") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(";")?;
                StmtKind::Return(v)
            }
            Tok::Ident(k)
                if k == "const"
                    || ["bit", "int", "varbit", "bool"].contains(&k.as_str())
                    || matches!(self.peek_at(1), Tok::Ident(_)) =>
            {
                StmtKind::Var(self.local_decl(annotations)?)
            }
            _ => {
                let lhs = self.expr()?;
                if self.eat("=") {
                    let rhs = self.expr()?;
                    self.expect(";")?;
                    StmtKind::Assign(lhs, rhs)
                } else {
                    if !matches!(lhs.kind, ExprKind::Call { .. }) {
                        return self.fail("`=` or a call");
                    }
                    self.expect(";")?;
                    StmtKind::Call(lhs)
                }
            }
        };
        Ok(Stmt { kind, span })
    }

    fn stmt_as_block(&mut self) -> R<Vec<Stmt>> {
        let s = self.stmt()?;
        Ok(match s.kind {
            StmtKind::Block(b) => b,
            _ => vec![s],
        })
    }

    pub fn expr(&mut self) -> R<Expr> {
        self.depth += 1;
        let r = self.expr_inner();
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self) -> R<Expr> {
        self.too_deep()?;
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            let span = c.span;
            return Ok(Expr {
                kind: ExprKind::Ternary(Box::new(c), Box::new(a), Box::new(b)),
                span,
            });
        }
        Ok(c)
    }

    /// The binary operator at the cursor with its precedence level (higher binds tighter),
    /// and how many tokens it takes.
    fn binop(&self) -> Option<(BinOp, u8, usize)> {
        let t = self.peek();
        Some(match t {
            Tok::Punct("||") => (BinOp::LOr, 1, 1),
            Tok::Punct("&&") => (BinOp::LAnd, 2, 1),
            Tok::Punct("==") => (BinOp::Eq, 3, 1),
            Tok::Punct("!=") => (BinOp::Ne, 3, 1),
            Tok::Punct(">") => {
                let a = self.toks[self.at].span;
                let b = self.toks.get(self.at + 1).map(|t| (&t.tok, t.span));
                match b {
                    Some((Tok::Punct(">"), s)) if s.line == a.line && s.col == a.col + 1 => {
                        (BinOp::Shr, 8, 2)
                    }
                    _ => (BinOp::Gt, 4, 1),
                }
            }
            Tok::Punct("<") => (BinOp::Lt, 4, 1),
            Tok::Punct("<=") => (BinOp::Le, 4, 1),
            Tok::Punct(">=") => (BinOp::Ge, 4, 1),
            Tok::Punct("|") => (BinOp::Or, 5, 1),
            Tok::Punct("^") => (BinOp::Xor, 6, 1),
            Tok::Punct("&") => (BinOp::And, 7, 1),
            Tok::Punct("<<") => (BinOp::Shl, 8, 1),
            Tok::Punct("++") => (BinOp::Concat, 9, 1),
            Tok::Punct("+") => (BinOp::Add, 9, 1),
            Tok::Punct("-") => (BinOp::Sub, 9, 1),
            Tok::Punct("|+|") => (BinOp::SatAdd, 9, 1),
            Tok::Punct("|-|") => (BinOp::SatSub, 9, 1),
            Tok::Punct("*") => (BinOp::Mul, 10, 1),
            Tok::Punct("/") => (BinOp::Div, 10, 1),
            Tok::Punct("%") => (BinOp::Mod, 10, 1),
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> R<Expr> {
        let mut lhs = self.unary()?;
        let mut chain = 0;
        while let Some((op, prec, n)) = self.binop() {
            // A long chain is a deep (left-leaning) tree: bounded like nesting.
            chain += 1;
            if chain > MAX_DEPTH {
                return Err(self.src.error(
                    self.span(),
                    format!("an expression of more than {MAX_DEPTH} operators is not supported"),
                ));
            }
            if prec <= min {
                break;
            }
            for _ in 0..n {
                self.bump();
            }
            let rhs = self.binary(prec)?;
            let span = lhs.span;
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> R<Expr> {
        self.depth += 1;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> R<Expr> {
        self.too_deep()?;
        let span = self.span();
        let op = match self.peek() {
            Tok::Punct("!") => Some(UnOp::Not),
            Tok::Punct("~") => Some(UnOp::BitNot),
            Tok::Punct("-") => Some(UnOp::Neg),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let e = self.unary()?;
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                span,
            });
        }
        // A cast `(type) e`.
        if self.is("(") {
            let is_cast = match (self.peek_at(1), self.peek_at(2), self.peek_at(3)) {
                (Tok::Ident(k), _, _) if ["bit", "int", "bool", "varbit"].contains(&k.as_str()) => {
                    true
                }
                (Tok::Ident(_), Tok::Punct(")"), next) => {
                    matches!(next, Tok::Ident(_) | Tok::Int { .. } | Tok::Punct("("))
                }
                _ => false,
            };
            if is_cast {
                self.bump();
                let ty = self.ty()?;
                self.expect(")")?;
                let e = self.unary()?;
                return Ok(Expr {
                    kind: ExprKind::Cast(ty, Box::new(e)),
                    span,
                });
            }
        }
        self.postfix()
    }

    fn postfix(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        loop {
            let span = e.span;
            if self.eat(".") {
                let (m, _) = self.ident()?;
                e = Expr {
                    kind: ExprKind::Member(Box::new(e), m),
                    span,
                };
            } else if self.is("[") {
                self.bump();
                let a = self.expr()?;
                if self.eat(":") {
                    let b = self.expr()?;
                    self.expect("]")?;
                    e = Expr {
                        kind: ExprKind::Slice(Box::new(e), Box::new(a), Box::new(b)),
                        span,
                    };
                } else {
                    self.expect("]")?;
                    e = Expr {
                        kind: ExprKind::Index(Box::new(e), Box::new(a)),
                        span,
                    };
                }
            } else if self.is("(") || self.is("<") && self.looks_like_targs() {
                let mut targs = Vec::new();
                if self.eat("<") {
                    loop {
                        targs.push(self.ty()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(">")?;
                }
                let args = self.args()?;
                e = Expr {
                    kind: ExprKind::Call {
                        func: Box::new(e),
                        targs,
                        args,
                    },
                    span,
                };
            } else {
                return Ok(e);
            }
        }
    }

    /// Whether `<` at the cursor opens type arguments of a call (`lookahead<bit<8>>()`).
    fn looks_like_targs(&self) -> bool {
        match (self.peek_at(1), self.peek_at(2)) {
            (Tok::Ident(k), _) if ["bit", "int", "bool", "varbit"].contains(&k.as_str()) => true,
            (Tok::Ident(_), Tok::Punct(">")) => {
                matches!(self.peek_at(3), Tok::Punct("("))
            }
            _ => false,
        }
    }

    fn primary(&mut self) -> R<Expr> {
        let span = self.span();
        let kind = match self.peek().clone() {
            Tok::Int { value, width } => {
                self.bump();
                ExprKind::Int { value, width }
            }
            Tok::Str(s) => {
                self.bump();
                ExprKind::Str(s)
            }
            Tok::Ident(n) => {
                self.bump();
                match n.as_str() {
                    "true" => ExprKind::Bool(true),
                    "false" => ExprKind::Bool(false),
                    "default" | "_" => ExprKind::Default,
                    _ => ExprKind::Name(n),
                }
            }
            Tok::Punct(".") => {
                // `.name`: the top-level name.
                self.bump();
                ExprKind::Name(self.name()?)
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect(")")?;
                return Ok(e);
            }
            Tok::Punct("{") => {
                self.bump();
                let mut items = Vec::new();
                while !self.eat("}") {
                    items.push(self.expr()?);
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                ExprKind::List(items)
            }
            _ => return self.fail("an expression"),
        };
        Ok(Expr { kind, span })
    }
}
