//! The P4-16 syntax tree the parser builds: declarations, parsers, controls, statements and
//! expressions, each carrying the place it was written (`Span`) for error messages.

/// A place in the original source: file index (into `Source::files`), line, column (from 1),
/// and the byte offset in the preprocessed text (the order of declarations across files).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    pub pos: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// `bit<N>` (N may be a constant expression, kept for the checker).
    Bit(Box<Expr>),
    /// `int<N>`.
    Int(Box<Expr>),
    Varbit(Box<Expr>),
    Bool,
    Void,
    /// `error`, `packet_in`, a typedef, header, struct, enum or extern, with type arguments.
    Named(String, Vec<Type>),
    /// A header stack `T[N]`.
    Stack(Box<Type>, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: String,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    None,
    In,
    Out,
    InOut,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub dir: Dir,
    pub ty: Type,
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub ty: Type,
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub kind: DeclKind,
    pub annotations: Vec<Annotation>,
    pub span: Span,
}

impl Decl {
    pub fn annotation(&self, name: &str) -> Option<&Annotation> {
        self.annotations.iter().find(|a| a.name == name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeclKind {
    Typedef {
        name: String,
        ty: Type,
    },
    Const {
        name: String,
        ty: Type,
        value: Expr,
    },
    Header {
        name: String,
        fields: Vec<FieldDecl>,
    },
    Struct {
        name: String,
        fields: Vec<FieldDecl>,
    },
    HeaderUnion {
        name: String,
    },
    Enum {
        name: String,
        underlying: Option<Type>,
        members: Vec<(String, Option<Expr>)>,
    },
    /// An extern type or function (its methods are known to the lowering by name).
    Extern {
        name: String,
    },
    MatchKind(Vec<String>),
    Error(Vec<String>),
    /// A parser, control or package type declaration (a prototype without a body).
    Prototype {
        name: String,
    },
    Parser {
        name: String,
        params: Vec<Param>,
        /// Constructor parameters (`parser P(...)(bit<8> depth)`), bound where it is
        /// instantiated.
        ctor_params: Vec<Param>,
        locals: Vec<Decl>,
        states: Vec<State>,
    },
    Control {
        name: String,
        params: Vec<Param>,
        /// Constructor parameters, as a parser's.
        ctor_params: Vec<Param>,
        locals: Vec<Decl>,
        apply: Vec<Stmt>,
    },
    Action {
        name: String,
        params: Vec<Param>,
        body: Vec<Stmt>,
    },
    Table {
        name: String,
        props: Vec<TableProp>,
    },
    /// `Type<targs>(args) name [= { methods }];`
    Instance {
        ty: Type,
        args: Vec<Expr>,
        name: String,
        methods: Vec<Decl>,
    },
    /// A function or method body (an extern instance initializer's `apply`).
    Function {
        ret: Type,
        name: String,
        params: Vec<Param>,
        body: Vec<Stmt>,
    },
    /// `Type name [= init];` inside a control or parser.
    Var {
        ty: Type,
        name: String,
        init: Option<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct KeyElem {
    pub expr: Expr,
    pub kind: String,
    pub annotations: Vec<Annotation>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EntryDecl {
    pub keys: Vec<Expr>,
    pub action: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TableProp {
    Key(Vec<KeyElem>, Span),
    Actions(Vec<(Expr, Span)>, Span),
    /// The entries, where they stand, and whether they are `const` (the control plane may
    /// not add to such a table).
    Entries(Vec<EntryDecl>, Span, bool),
    /// Any other `name = expr;` (`size`, `default_action`, `implementation`, ...).
    Value {
        name: String,
        value: Expr,
        is_const: bool,
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// `@dontmerge(...)` and the like.
    pub annotations: Vec<Annotation>,
    pub name: String,
    pub body: Vec<Stmt>,
    pub transition: Option<Transition>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Transition {
    Goto(String, Span),
    Select {
        keys: Vec<Expr>,
        cases: Vec<SelectCase>,
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    /// One keyset expression per key (`default`/`_` for any), or one `default`.
    pub keysets: Vec<Expr>,
    pub next: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SwitchLabel {
    Name(String),
    Default,
}

/// The labels of a `switch` case and its body (empty for a label that falls through).
pub type SwitchCase = (Vec<(SwitchLabel, Span)>, Vec<Stmt>);

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Assign(Expr, Expr),
    /// A method or function call used as a statement.
    Call(Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    Block(Vec<Stmt>),
    Switch(Expr, Vec<SwitchCase>),
    Exit,
    Return(Option<Expr>),
    Var(Decl),
    Empty,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LAnd,
    LOr,
    Concat,
    SatAdd,
    SatSub,
    /// `&&&` (value and mask).
    Mask,
    /// `..` (a range keyset).
    Range,
}

impl BinOp {
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::LAnd => "&&",
            BinOp::LOr => "||",
            BinOp::Concat => "++",
            BinOp::SatAdd => "|+|",
            BinOp::SatSub => "|-|",
            BinOp::Mask => "&&&",
            BinOp::Range => "..",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Not,
    BitNot,
    Neg,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int {
        value: u128,
        width: Option<(u32, bool)>,
    },
    Bool(bool),
    Str(String),
    Name(String),
    /// `.name`: a name at the top level (P4's `.` prefix).
    Member(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Slice(Box<Expr>, Box<Expr>, Box<Expr>),
    Call {
        func: Box<Expr>,
        targs: Vec<Type>,
        args: Vec<Expr>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Type, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `{ a, b }` or a tuple `(a, b)` of keysets.
    List(Vec<Expr>),
    /// `default` or `_`.
    Default,
}

impl Expr {
    /// The dotted text of a name or member chain (`hdr.ipv4.ttl`), if it is one.
    pub fn path(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Name(n) => Some(n.clone()),
            ExprKind::Member(b, m) => Some(format!("{}.{m}", b.path()?)),
            _ => None,
        }
    }
}
