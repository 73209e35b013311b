//! Expressions of a spec file (buffer lengths, launch sizes, constraints, work),
//! parsed and evaluated by the `evalexpr` crate: integer arithmetic with checked
//! overflow and division, comparisons, `&&`/`||`, `min`/`max`, `if`. Each keeps
//! the text and the line it came from, so an error says where it is.

use std::collections::BTreeMap;

use evalexpr::{ContextWithMutableVariables, HashMapContext, Node, Value};

/// Names and their values when an expression is evaluated: dimensions, derived
/// values and parameters, all integers.
pub type Scope = BTreeMap<String, i64>;

#[derive(Debug, Clone)]
pub struct Expr {
    pub text: String,
    /// 1-based line in the spec file.
    pub line: usize,
    node: Node,
}

impl Expr {
    /// Parses `text`; a syntax error is the message (the caller adds file and line).
    pub fn parse(text: &str, line: usize) -> Result<Expr, String> {
        let node = evalexpr::build_operator_tree(text)
            .map_err(|e| format!("cannot read the expression '{text}': {e}"))?;
        Ok(Expr {
            text: text.to_string(),
            line,
            node,
        })
    }

    /// The variable names it reads (functions like `min` excluded).
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .node
            .iter_variable_identifiers()
            .map(str::to_string)
            .collect();
        v.sort();
        v.dedup();
        v
    }

    fn context(scope: &Scope) -> HashMapContext {
        let mut ctx = HashMapContext::new();
        for (k, v) in scope {
            // Names were checked when the spec was read; a failure here cannot happen
            // for valid identifiers, and an invalid one simply stays unset.
            let _ = ctx.set_value(k.clone(), Value::Int(*v));
        }
        ctx
    }

    /// Evaluates to an integer. Unknown names, division by zero, overflow and a
    /// non-integer result are errors that say which and where.
    pub fn int(&self, scope: &Scope) -> Result<i64, String> {
        match self.node.eval_with_context(&Self::context(scope)) {
            Ok(Value::Int(v)) => Ok(v),
            Ok(Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
            Ok(Value::Boolean(b)) => Ok(i64::from(b)),
            Ok(other) => Err(format!("'{}' gives {other}, not an integer", self.text)),
            Err(e) => Err(self.explain(e, scope)),
        }
    }

    /// Evaluates to a number (integer or float): work counts, scalar arguments.
    pub fn number(&self, scope: &Scope) -> Result<f64, String> {
        match self.node.eval_with_context(&Self::context(scope)) {
            Ok(Value::Int(v)) => Ok(v as f64),
            Ok(Value::Float(f)) => Ok(f),
            Ok(other) => Err(format!("'{}' gives {other}, not a number", self.text)),
            Err(e) => Err(self.explain(e, scope)),
        }
    }

    /// Evaluates to true or false (constraints).
    pub fn truth(&self, scope: &Scope) -> Result<bool, String> {
        match self.node.eval_with_context(&Self::context(scope)) {
            Ok(Value::Boolean(b)) => Ok(b),
            Ok(Value::Int(v)) => Ok(v != 0),
            Ok(other) => Err(format!("'{}' gives {other}, not true or false", self.text)),
            Err(e) => Err(self.explain(e, scope)),
        }
    }

    fn explain(&self, e: evalexpr::EvalexprError, scope: &Scope) -> String {
        let names: Vec<String> = self
            .names()
            .into_iter()
            .filter_map(|n| scope.get(&n).map(|v| format!("{n}={v}")))
            .collect();
        let with = if names.is_empty() {
            String::new()
        } else {
            format!(" with {}", names.join(", "))
        };
        let why = match &e {
            evalexpr::EvalexprError::DivisionError { .. } => "division by zero".to_string(),
            evalexpr::EvalexprError::ModulationError { .. } => {
                "remainder of a division by zero".to_string()
            }
            evalexpr::EvalexprError::AdditionError { .. }
            | evalexpr::EvalexprError::SubtractionError { .. }
            | evalexpr::EvalexprError::MultiplicationError { .. } => {
                "the result overflows a 64-bit integer".to_string()
            }
            other => other.to_string(),
        };
        format!("'{}'{with}: {why}", self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(pairs: &[(&str, i64)]) -> Scope {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn integer_arithmetic_and_names() {
        let e = Expr::parse("n / (TS * WPT) + min(n, 3)", 4).unwrap();
        assert_eq!(e.names(), vec!["TS", "WPT", "n"]);
        assert_eq!(
            e.int(&scope(&[("n", 1024), ("TS", 32), ("WPT", 4)]))
                .unwrap(),
            11
        );
        let t = Expr::parse("TS % WPT == 0 && TS <= 1024", 1).unwrap();
        assert!(t.truth(&scope(&[("TS", 32), ("WPT", 4)])).unwrap());
        assert!(!t.truth(&scope(&[("TS", 32), ("WPT", 3)])).unwrap());
        let f = Expr::parse("2.5 * n", 1).unwrap();
        assert_eq!(f.number(&scope(&[("n", 4)])).unwrap(), 10.0);
    }

    #[test]
    fn errors_say_what_went_wrong() {
        assert!(Expr::parse("n * (", 1).is_err());
        let d = Expr::parse("n / WPT", 7).unwrap();
        let e = d.int(&scope(&[("n", 8), ("WPT", 0)])).unwrap_err();
        assert!(e.contains("division by zero") && e.contains("WPT=0"), "{e}");
        let o = Expr::parse("n * n * n", 1).unwrap();
        let e = o.int(&scope(&[("n", 1 << 40)])).unwrap_err();
        assert!(e.contains("overflows"), "{e}");
        let u = Expr::parse("m + 1", 1).unwrap();
        assert!(u.int(&scope(&[("n", 1)])).is_err());
    }
}
