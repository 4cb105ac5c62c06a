package main

// Timing mode: the landscape is served the way upstream's scheduler reads it in production,
// through controller-runtime's informer cache, and DetermineSeed is timed per decision.
//
//	request: {"strategy": "SameRegion", "objects": [...], "pending": [shoot, ...],
//	          "time": {"targetMs": 2500, "min": 3, "max": 5000, "compare": ["seed", ...]}}
//	answer:  {"timing": {"reader": "...", "informers": [...], "backingReads": 0,
//	          "fillMs": 1.5, "cpuNs": [...], "wallNs": [...], "decisions": [...]}}
//
// "objects" fill the cache; the "pending" shoots are decided, not served (as in a cache where
// they have no seed yet they would count nothing). Decision k decides pending shoot k mod the
// number of pending shoots; N decisions are timed, N chosen from three untimed decisions (their
// median) so that they take about targetMs of CPU, within [min, max]. Each is timed as the process's CPU time
// (getrusage: every thread, so the garbage collector's work too) and as wall time; decoding and
// filling the cache are not timed. "compare" names, per pending shoot, the seed another
// scheduler chose: after the timed decisions, a decision that picked another seed with as many
// shoots is asked again with the compared seed listed first, and "ties" holds it when upstream
// then picks it. "backingReads" counts the reads that reached the objects behind the cache
// while deciding: zero when every read was served by the informers.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	"github.com/gardener/gardener/pkg/api/indexer"
	"github.com/gardener/gardener/pkg/apis/config/scheduler/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	"github.com/gardener/gardener/pkg/scheduler/controller/shoot"
)

type timing struct {
	TargetMS float64  `json:"targetMs"`
	Min      int      `json:"min"`
	Max      int      `json:"max"`
	Compare  []string `json:"compare,omitempty"`
}

type timed struct {
	Reader       string     `json:"reader"`
	Informers    []string   `json:"informers"`
	BackingReads int64      `json:"backingReads"`
	FillMS       float64    `json:"fillMs"`
	CPUNs        []int64    `json:"cpuNs"`
	WallNs       []int64    `json:"wallNs"`
	Decisions    []decision `json:"decisions"`
}

// The kinds DetermineSeed reads, with their scope: what the informers serve.
var served = []struct {
	obj   client.Object
	scope meta.RESTScope
}{
	{&gardencorev1beta1.Seed{}, meta.RESTScopeRoot},
	{&gardencorev1beta1.Shoot{}, meta.RESTScopeNamespace},
	{&gardencorev1beta1.CloudProfile{}, meta.RESTScopeRoot},
	{&gardencorev1beta1.NamespacedCloudProfile{}, meta.RESTScopeNamespace},
	{&gardencorev1beta1.Project{}, meta.RESTScopeRoot},
	{&corev1.ConfigMap{}, meta.RESTScopeNamespace},
}

// selector is the label selector the cache asks for (its ByObject options).
func selector(opts metav1.ListOptions) (*client.ListOptions, error) {
	s, err := labels.Parse(opts.LabelSelector)
	return &client.ListOptions{LabelSelector: s}, err
}

// listWatch lists and watches the fake client behind the cache, standing in for the API server.
func listWatch(c client.WithWatch, list func() client.ObjectList) toolscache.ListerWatcher {
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
			sel, err := selector(opts)
			if err != nil {
				return nil, err
			}
			l := list()
			return l, c.List(ctx, l, sel)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			sel, err := selector(opts)
			if err != nil {
				return nil, err
			}
			return c.Watch(ctx, list(), sel)
		},
	}
	return toolscache.ToListWatcherWithWatchListSemantics(lw, noWatchList{})
}

// noWatchList makes the reflector list, then watch: the fake client sends no initial events.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// cacheBacked fills an informer cache from objects and returns a client whose reads it serves,
// built as a manager builds its client, and a counter of the reads that reach the objects
// behind the cache.
func cacheBacked(ctx context.Context, objects []client.Object) (client.Client, []string, *atomic.Int64, error) {
	var reads atomic.Int64
	backing := fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objects...).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				reads.Add(1)
				return c.Get(ctx, key, obj, opts...)
			},
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				reads.Add(1)
				return c.List(ctx, list, opts...)
			},
		}).
		Build()
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, s := range served {
		gvk, err := apiutil.GVKForObject(s.obj, scheme)
		if err != nil {
			return nil, nil, nil, err
		}
		mapper.Add(gvk, s.scope)
	}
	// no API server: informers list and watch the fake client instead
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	regionConfig, err := labels.Parse(v1beta1constants.SchedulingPurpose + "=" + v1beta1constants.SchedulingPurposeRegionConfig)
	if err != nil {
		return nil, nil, nil, err
	}
	// the cache options of upstream's scheduler (cmd/gardener-scheduler/app)
	informers, err := cache.New(cfg, cache.Options{
		Scheme:   scheme,
		Mapper:   mapper,
		ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: regionConfig}},
		NewInformer: func(_ toolscache.ListerWatcher, obj kruntime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			gvk, err := apiutil.GVKForObject(obj, scheme)
			if err != nil {
				panic(err)
			}
			listGVK := schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind + "List"}
			lw := listWatch(backing, func() client.ObjectList {
				l, err := scheme.New(listGVK)
				if err != nil {
					panic(err)
				}
				return l.(client.ObjectList)
			})
			return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
		},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	// the index upstream's scheduler adds (its addAllFieldIndexes)
	if err := indexer.AddProjectNamespace(ctx, informers); err != nil {
		return nil, nil, nil, err
	}
	var names []string
	for _, s := range served {
		if _, err := informers.GetInformer(ctx, s.obj, cache.BlockUntilSynced(false)); err != nil {
			return nil, nil, nil, err
		}
		names = append(names, fmt.Sprintf("%T", s.obj))
	}
	go func() {
		if err := informers.Start(ctx); err != nil {
			panic(err)
		}
	}()
	if !informers.WaitForCacheSync(ctx) {
		return nil, nil, nil, fmt.Errorf("the informer cache did not sync")
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper, Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		return nil, nil, nil, err
	}
	return c, names, &reads, nil
}

// frontSeed lists one seed first, to ask whether upstream picks it equally.
type frontSeed struct {
	client.Client
	front string
}

func (f *frontSeed) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := f.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if seeds, ok := list.(*gardencorev1beta1.SeedList); ok {
		if i := slices.IndexFunc(seeds.Items, func(s gardencorev1beta1.Seed) bool { return s.Name == f.front }); i > 0 {
			s := seeds.Items[i]
			seeds.Items = slices.Insert(slices.Delete(seeds.Items, i, i+1), 0, s)
		}
	}
	return nil
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func outcome(k string, seed string, err error, p any) decision {
	d := decision{Shoot: k}
	switch {
	case p != nil:
		d.Panic = fmt.Sprint(p)
	case err != nil:
		d.Error = err.Error()
	default:
		d.Seed = seed
		d.Ties = []string{seed}
	}
	return d
}

func timeDecisions(parent context.Context, req request) answer {
	objects, invalid := decodeAll("objects", req.Objects)
	if invalid != "" {
		return answer{Invalid: invalid}
	}
	decoded, invalid := decodeAll("pending", req.Pending)
	if invalid != "" {
		return answer{Invalid: invalid}
	}
	var pending []*gardencorev1beta1.Shoot
	for i, obj := range decoded {
		s, ok := obj.(*gardencorev1beta1.Shoot)
		if !ok {
			return answer{Invalid: fmt.Sprintf("pending[%d]: a %T, not a Shoot", i, obj)}
		}
		pending = append(pending, s)
	}
	t := req.Time
	if len(pending) == 0 || t.Min < 1 || t.Max < t.Min || (len(t.Compare) != 0 && len(t.Compare) != len(pending)) {
		return answer{Invalid: "time: needs pending shoots, 1 <= min <= max, and one compare entry per pending shoot"}
	}
	req.Objects, req.Pending = nil, nil
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	start := time.Now()
	c, informers, reads, err := cacheBacked(ctx, objects)
	if err != nil {
		return answer{Invalid: "cache: " + err.Error()}
	}
	fill := time.Since(start)
	objects = nil
	cfg := &v1alpha1.ShootSchedulerConfiguration{Strategy: v1alpha1.CandidateDeterminationStrategy(req.Strategy)}
	r := &shoot.Reconciler{Client: c, Config: cfg, GardenNamespace: "garden"}

	// N from three untimed decisions: the median of them
	var probes []time.Duration
	for k := range 3 {
		probe := pending[k%len(pending)].DeepCopy()
		before := cpuNow()
		determine(ctx, r, probe)
		probes = append(probes, cpuNow()-before)
	}
	slices.Sort(probes)
	per := max(probes[1], time.Microsecond)
	n := min(max(int(t.TargetMS*float64(time.Millisecond)/float64(per)), t.Min), t.Max)

	out := &timed{
		Reader:    "client.New with CacheOptions.Reader: controller-runtime's informer cache",
		Informers: informers,
		FillMS:    float64(fill) / float64(time.Millisecond),
	}
	runtime.GC()
	readsBefore := reads.Load()
	for k := range n {
		s := pending[k%len(pending)].DeepCopy()
		wall := time.Now()
		cpu := cpuNow()
		seed, err, p := determine(ctx, r, s)
		cpuSpent := cpuNow() - cpu
		wallSpent := time.Since(wall)
		out.CPUNs = append(out.CPUNs, int64(cpuSpent))
		out.WallNs = append(out.WallNs, int64(wallSpent))
		out.Decisions = append(out.Decisions, outcome(key(s), seed, err, p))
	}
	out.BackingReads = reads.Load() - readsBefore

	// untimed: does upstream pick the compared seed equally?
	if len(t.Compare) != 0 {
		shoots := &gardencorev1beta1.ShootList{}
		if err := c.List(ctx, shoots); err != nil {
			return answer{Invalid: "list shoots: " + err.Error()}
		}
		usage := helper.CalculateSeedUsage(helper.ConvertShootList(shoots.Items))
		front := &frontSeed{Client: c}
		again := &shoot.Reconciler{Client: front, Config: cfg, GardenNamespace: "garden"}
		for k := range out.Decisions {
			d := &out.Decisions[k]
			other := t.Compare[k%len(pending)]
			if d.Seed == "" || other == "" || other == d.Seed || usage[other] != usage[d.Seed] {
				continue
			}
			front.front = other
			if got, err, p := determine(ctx, again, pending[k%len(pending)].DeepCopy()); err == nil && p == nil && got == other {
				d.Ties = append(d.Ties, other)
				sort.Strings(d.Ties)
			}
		}
	}
	return answer{Timing: out}
}
